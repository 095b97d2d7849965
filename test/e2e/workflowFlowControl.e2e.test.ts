import path from "node:path";
import { describe, expect, it } from "vitest";
import { RUN_ROUTES, waitForRuns, useWorkDir, devBackends, useDevProject } from "#test/support/e2e/index.ts";
import { maxActive, startedAt } from "#test/support/workflow/activeRuns.ts";

// Issue 23's "Done when" for concurrency per key, debounce and idempotency keys, through a project under
// `platform dev` and `platform dev --node`, watched with `platform workflow`. Ports of this file: 8946
// (workerd), 8947 (Node). Every limit is checked from the runs' own event times.
const work = useWorkDir("platform-e2e-wfflow-");

const FLOW_PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow(
  "sync",
  {
    start: async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, 700));
      return { done: true, result: ctx.data };
    },
  },
  { concurrency: { limit: 2, key: (data) => data.customer } },
);
workflow("digest", { start: async (ctx) => ({ done: true, result: ctx.data }) }, {
  debounce: { periodMS: 1000, key: (data) => data.customer },
});
// One at a time, each run active until it is sent "release": the queue stays put while the CLI looks.
workflow(
  "exclusive",
  {
    start: async () => ({ step: "finish", waitFor: "release" }),
    finish: async (ctx) => ({ done: true, result: ctx.data }),
  },
  { concurrency: { limit: 1, key: (data) => data.customer } },
);
workflow("charge", { start: async (ctx) => ({ done: true, result: ctx.data }) });
${RUN_ROUTES}
router.post("/start/:name", async (request) => {
  const { data, ...options } = await request.json();
  const run = await workflow.start(request.params.name, data, options);
  return Response.json({ runId: run.id, created: run.created });
});
`;

async function start(dev: { url: string; output(): string }, name: string, data: unknown, options: object = {}) {
  const response = await fetch(`${dev.url}/start/${name}`, {
    method: "POST",
    body: JSON.stringify({ data, ...options }),
  });
  if (response.status !== 200)
    throw new Error(
      `starting ${name} answered ${response.status}: ${await response.text()}\nplatform dev printed:\n${dev.output().slice(-4000)}`,
    );
  return (await response.json()) as { runId: string; created: boolean };
}

describe.each(devBackends(8946))("flow control under %s", (_name, flags, port) => {
  const dev = useDevProject(path.join(work, `flow-${port}`), FLOW_PROJECT, flags, port);
  const { workflowCli } = dev;

  it("10 starts with concurrency { limit: 2, key: customer } for one customer: never more than 2 active, all complete; another customer is not held back", async () => {
    const started = await Promise.all([
      ...Array.from({ length: 10 }, (_, n) => start(dev, "sync", { customer: "acme", n })),
      ...Array.from({ length: 2 }, (_, n) => start(dev, "sync", { customer: "beta", n })),
    ]);
    const acmeIds = started.slice(0, 10).map((s) => s.runId);
    const betaIds = started.slice(10).map((s) => s.runId);

    const acme = await waitForRuns(dev.url, acmeIds, 60_000);
    const beta = await waitForRuns(dev.url, betaIds, 60_000);
    expect(acme.map((run) => run.status)).toEqual(Array(10).fill("completed"));
    expect(beta.map((run) => run.status)).toEqual(["completed", "completed"]);
    expect(maxActive(acme)).toBe(2);
    expect(acme.filter((run) => run.events.some((e) => e.type === "workflow_dequeued")).length).toBe(8);
    // Beta started at once, not after acme's queue.
    expect(beta.every((run) => run.events.every((e) => e.type !== "workflow_dequeued"))).toBe(true);
    expect(Math.max(...beta.map(startedAt))).toBeLessThan(Math.max(...acme.map(startedAt)));
  });

  it("the CLI lists queued runs with their key, says what one waits for, and they start in turn", async () => {
    const first = await start(dev, "exclusive", { customer: "acme", n: 1 });
    const second = await start(dev, "exclusive", { customer: "acme", n: 2 });
    const third = await start(dev, "exclusive", { customer: "acme", n: 3 });
    const listed = await workflowCli("list", "--status", "queued", "--name", "exclusive", "--full");
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain(second.runId);
    expect(listed.stdout).toContain(third.runId);
    expect(listed.stdout).not.toContain(first.runId);
    expect(listed.stdout).toMatch(/exclusive\s+queued\s+.*1 ahead, key "acme"/);
    const shown = await workflowCli("get", third.runId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/queued for .*, waiting for a concurrency slot: 1 of 1 runs of key "acme" are active/);
    expect(shown.stdout).toMatch(/workflow_created .*queued under key "acme"/);
    // An event sent to a queued run is kept until it waits for it.
    for (const run of [first, second, third]) {
      const sent = await workflowCli("send", run.runId, "release");
      expect(sent.code, sent.stderr).toBe(0);
    }
    const [firstRun, secondRun, thirdRun] = await waitForRuns(dev.url, [first.runId, second.runId, third.runId]);
    expect(startedAt(secondRun!)).toBeGreaterThanOrEqual(firstRun!.events.at(-1)!.at);
    expect(startedAt(thirdRun!)).toBeGreaterThanOrEqual(secondRun!.events.at(-1)!.at);
  });

  it("5 starts with debounce { periodMS: 1000, key } in quick succession start one run, with the last data", async () => {
    const started = [];
    for (let n = 0; n < 5; n++) started.push(await start(dev, "digest", { customer: "acme", n }));
    expect(new Set(started.map((s) => s.runId)).size).toBe(1);
    expect(started.map((s) => s.created)).toEqual([true, false, false, false, false]);
    const [run] = await waitForRuns(dev.url, [started[0]!.runId], 30_000);
    expect(run!.status).toBe("completed");
    expect(run!.result).toEqual({ customer: "acme", n: 4 });
    const lastStart = run!.events.findLast((e) => e.type === "start_replaced")!.at;
    expect(startedAt(run!)).toBeGreaterThanOrEqual(lastStart + 1000);
    const listed = await workflowCli("list", "--name", "digest", "--json");
    expect(JSON.parse(listed.stdout).runs).toHaveLength(1);
  });

  it("two starts with the same idempotencyKey, the second after the first completed, return the same run", async () => {
    const first = await start(dev, "charge", { amount: 5 }, { idempotencyKey: "order-7" });
    expect(first.created).toBe(true);
    const [done] = await waitForRuns(dev.url, [first.runId], 30_000);
    expect(done!.status).toBe("completed");
    const second = await start(dev, "charge", { amount: 6 }, { idempotencyKey: "order-7" });
    expect(second).toEqual({ runId: first.runId, created: false });
    // The CLI's start with the same key answers it too.
    const again = await workflowCli("start", "charge", "--data", '{"amount":7}', "--idempotency-key", "order-7");
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(first.runId);
    expect(again.stderr).toMatch(/idempotency key "order-7" answers an earlier run/);
    const other = await start(dev, "charge", { amount: 8 }, { idempotencyKey: "order-8" });
    expect(other.created).toBe(true);
  });
});
