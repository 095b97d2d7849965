// Callback URLs through the real `platform dev` (workerd) and `platform dev --node`: a step's
// ctx.callbackURL points at the project's origin; a GET answers a confirm page and delivers nothing;
// a POST completes the waiting run with its body; a second POST answers 409. Ports of this file:
// 8994 (workerd), 8995 (Node).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { devBackends, getRun, RUN_ROUTES, startRuns, useDevProject, useWorkDir } from "#test/support/e2e/index.ts";

const work = useWorkDir("platform-e2e-callbacks-");

const PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("approve", {
  start: async (ctx) => {
    ctx.write("link", await ctx.callbackURL("approval"));
    return { step: "decide", waitFor: "approval" };
  },
  decide: async (ctx) => ({ done: true, result: ctx.event.payload }),
});
${RUN_ROUTES}`;

/** The URL the run's first step made (its scratchpad write). */
function linkOf(run: Awaited<ReturnType<typeof getRun>>): string | undefined {
  const completed = run.events.find((e) => e.type === "step_completed");
  return (completed?.payload as { writes?: { link?: string } } | undefined)?.writes?.link;
}

/** The event the run waits for (`workflow.get`'s `waitingFor`). */
const waitingFor = (run: object) => (run as { waitingFor?: { name: string } }).waitingFor?.name;

describe.each(devBackends(8994))("callback URLs under %s", (_backend, flags, port) => {
  const dev = useDevProject(path.join(work, `callbacks-${port}`), PROJECT, flags, port);

  it("a GET answers a page and delivers nothing; a POST completes the run with its body; a second POST is 409", async () => {
    const [runId] = await startRuns(dev.url, "approve");
    await expect.poll(async () => waitingFor(await getRun(dev.url, runId!)), { timeout: 30_000 }).toBe("approval");
    const link = linkOf(await getRun(dev.url, runId!));
    // On the address `Ready on` printed (PLATFORM_PROJECT_URL), which Node's fetch and a sender's client can reach.
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/__platform/callbacks/[^/]+/k1\\.`));
    const callback = link!;
    const host = new URL(link!).host;

    const page = await fetch(callback, { headers: { host } });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(await page.text()).toContain('<form method="post"><button type="submit">Confirm</button></form>');
    const untouched = await getRun(dev.url, runId!);
    expect(untouched.status).toBe("running");
    expect(untouched.events.some((e) => e.type === "event_received")).toBe(false);

    const post = () =>
      fetch(callback, {
        method: "POST",
        headers: { host, "content-type": "application/json" },
        body: JSON.stringify({ approved: true, by: "ada" }),
      });
    const first = await post();
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ delivered: true, event: "approval" });
    await expect.poll(async () => (await getRun(dev.url, runId!)).status, { timeout: 30_000 }).toBe("completed");
    expect((await getRun(dev.url, runId!)).result).toEqual({ approved: true, by: "ada" });

    const second = await post();
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe("conflict");
  });
});
