import { afterEach, describe, expect, it } from "vitest";
import { isPlatformError } from "#src/core/errors.ts";
import { resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import { TEST_ORIGIN, testWorkflow } from "platform/testing";

const START = Date.UTC(2026, 0, 1);
const HOUR = 3_600_000;

afterEach(() => resetWorkflowsForTests());

/** The code a promise rejects with. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    return isPlatformError(error) ? error.code : String(error);
  }
  return "resolved";
}

function defineApproval(): void {
  workflow("approve", {
    start: async (ctx) => {
      ctx.write("link", await ctx.callbackURL("approval", { ttlMS: HOUR }));
      return { step: "decide", waitFor: "approval", timeoutMS: 2 * HOUR };
    },
    decide: async (ctx) =>
      ctx.event ? { done: true, result: ctx.event.payload } : { step: "decide", waitFor: "approval" },
  });
}

const linkOf = (run: { view: { events: readonly { type: string; payload: object }[] } }) =>
  (run.view.events.find((e) => e.type === "step_completed")?.payload as { writes: { link: string } } | undefined)
    ?.writes.link ?? "";

describe("run.callback(url, body) in the test kit", () => {
  it("POSTs to the step's callback URL: the wait completes with the body, the event marked via callback", async () => {
    defineApproval();
    const run = await testWorkflow("approve", {}, { startAt: START });
    const link = linkOf(run);
    expect(link.startsWith(`${TEST_ORIGIN}/__platform/callbacks/`)).toBe(true);
    const view = await run.callback(link, { approved: true });
    expect(view.status).toBe("completed");
    expect(await run.result()).toEqual({ approved: true });
    expect(view.events.find((e) => e.type === "event_received")?.payload).toMatchObject({
      name: "approval",
      payload: { approved: true },
      via: "callback",
    });
  });

  it.each([
    ["a second POST", async (link: string) => link, true, false, "conflict"],
    ["an expired URL (its ttl passed on the virtual clock)", async (link: string) => link, false, true, "gone"],
    ["an altered URL", async (link: string) => `${link.slice(0, -3)}AAA`, false, false, "unauthorized"],
    [
      "a URL the kit did not make",
      async () => `${TEST_ORIGIN}/__platform/callbacks/x/k1.e30.AAAA`,
      false,
      false,
      "unauthorized",
    ],
    ["not a URL", async () => "approve please", false, false, "invalid_input"],
  ])("%s rejects with the platform's answer", async (_case, make, spendFirst, expire, code) => {
    defineApproval();
    const run = await testWorkflow("approve", {}, { startAt: START });
    const link = linkOf(run);
    if (spendFirst) await run.callback(link, "first");
    if (expire) await run.timeOut();
    expect(await codeOf(run.callback(await make(link), "again"))).toBe(code);
    if (!spendFirst) expect(run.view.events.some((e) => e.type === "event_received")).toBe(false);
  });
});
