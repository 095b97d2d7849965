import { describe, expect, it } from "vitest";
import { resolveDispatcher } from "#src/workers/dispatch/dispatcher.ts";
import { LOCAL_DISPATCH_SCRIPT_HEADER } from "#src/workers/dispatch/localDispatchHeader.ts";

/** A service binding that records what reached it. */
function recorder(answer: string) {
  const seen: Request[] = [];
  const fetcher = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      seen.push(new Request(input, init));
      return new Response(answer);
    },
  } as unknown as Fetcher;
  return { fetcher, seen };
}

describe("resolveDispatcher, locally", () => {
  it("reaches `platform dev`'s project through its own binding (LOCAL_SCRIPTS) before LOCAL_DISPATCH", async () => {
    const project = recorder("dev project");
    const front = recorder("front");
    const dispatcher = resolveDispatcher({
      LOCAL_SCRIPTS: JSON.stringify({ "proj-demo": "SCRIPT_0" }),
      SCRIPT_0: project.fetcher,
      LOCAL_DISPATCH: front.fetcher,
    } as never);
    expect(await (await dispatcher.get("proj-demo")!.fetch("https://demo.internal/")).text()).toBe("dev project");
    expect(front.seen).toEqual([]);
  });

  it("sends every other script to LOCAL_DISPATCH, naming it in the header over whatever the caller sent", async () => {
    const front = recorder("front");
    const dispatcher = resolveDispatcher({ LOCAL_SCRIPTS: "{}", LOCAL_DISPATCH: front.fetcher } as never);
    const answer = await dispatcher.get("proj-shop")!.fetch("https://shop.localhost/cart?x=1", {
      method: "POST",
      headers: { [LOCAL_DISPATCH_SCRIPT_HEADER]: "proj-victim", "x-kept": "yes" },
      body: "order",
    });
    expect(await answer.text()).toBe("front");
    const [request] = front.seen;
    expect(request!.headers.get(LOCAL_DISPATCH_SCRIPT_HEADER)).toBe("proj-shop");
    expect(request!.headers.get("x-kept")).toBe("yes");
    expect([request!.method, request!.url, await request!.text()]).toEqual([
      "POST",
      "https://shop.localhost/cart?x=1",
      "order",
    ]);
  });

  it("finds nothing for a script without a binding when there is no LOCAL_DISPATCH", () => {
    expect(resolveDispatcher({ LOCAL_SCRIPTS: "{}" }).get("proj-shop")).toBeNull();
  });
});
