import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  getRun,
  RUN_ROUTES,
  type RunView,
  useWorkDir,
  waitForRuns,
  devBackends,
  useDevProject,
} from "#test/support/e2e/index.ts";

// Issue 14's "Done when" for sleep, wait, timeout, cancel and retry-after, through a project under
// `platform dev` and `platform dev --node`, the run controlled from a shell with `platform workflow`.
// Ports of this file: 8930 (workerd), 8931 (Node). Every duration is read from the events' times.
const work = useWorkDir("platform-e2e-wfcontrols-");

const CONTROLS_PROJECT = `import { Router } from "itty-router";
import { RetryAfterError, workflow } from "platform";

workflow("nap", {
  start: async () => ({ step: "woke", sleepMS: 1500 }),
  woke: async () => ({ done: true, result: "rested" }),
});
workflow("approve", {
  start: async () => ({ step: "approved", waitFor: "approval" }),
  approved: async (ctx) => ({ done: true, result: ctx.event }),
});
workflow("impatient", {
  start: async () => ({ step: "decide", waitFor: "approval", timeoutMS: 1000 }),
  decide: async (ctx) => ({ done: true, result: { eventIsNull: ctx.event === null } }),
});
workflow("longnap", {
  start: async () => ({ step: "woke", sleepMS: 600_000 }),
  woke: async () => ({ done: true }),
});
workflow(
  "busy",
  {
    start: async (ctx) => {
      if (ctx.attempt === 1) throw new RetryAfterError("rate limited, retry in 1.2 s", 1200);
      return { done: true, result: ctx.attempt };
    },
  },
  { maxAttempts: 3 },
);
${RUN_ROUTES}
// Starts a run and answers how its run.result() settles, in this one request (workerd does not let a
// promise made in one request settle in another). The test finds the run by its workflow id meanwhile.
router.post("/settle/:name", async (request) => {
  const id = new URL(request.url).searchParams.get("id");
  const run = await workflow.start(request.params.name, null, { id });
  try {
    return Response.json({ runId: run.id, ok: true, value: await run.result() });
  } catch (error) {
    return Response.json({ runId: run.id, ok: false, code: error.code });
  }
});
`;

const at = (run: RunView, type: string, step: string, attempt?: number) => {
  const event = run.events.find(
    (e) => e.type === type && e.payload.step === step && (attempt === undefined || e.payload.attempt === attempt),
  );
  if (!event) throw new Error(`run ${run.id} has no ${type} of ${step}: ${JSON.stringify(run.events)}`);
  return event;
};

interface Settled {
  runId: string;
  ok: boolean;
  value?: unknown;
  code?: string;
}

/** Starts a run whose request answers how its `run.result()` settles; resolves with its run id and that answer. */
async function startSettling(url: string, name: string): Promise<{ runId: string; settled: Promise<Settled> }> {
  const workflowId = `${name}-${crypto.randomUUID()}`;
  const settled = fetch(`${url}/settle/${name}?id=${workflowId}`, { method: "POST" }).then(
    async (response) => (await response.json()) as Settled,
  );
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { runs } = (await (await fetch(`${url}/runs`)).json()) as { runs: { id: string; workflowId: string }[] };
    const run = runs.find((r) => r.workflowId === workflowId);
    if (run) return { runId: run.id, settled };
    if (Date.now() > deadline) throw new Error(`run of ${workflowId} never started`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Polls the run until `ready` holds (what it waits for is asynchronous under both backends). */
async function waitUntil(url: string, runId: string, ready: (run: RunView) => boolean): Promise<RunView> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = await getRun(url, runId);
    if (ready(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${runId} never got there: ${JSON.stringify(run)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(devBackends(8930))("workflow controls under %s", (_name, flags, port) => {
  const dev = useDevProject(path.join(work, `controls-${port}`), CONTROLS_PROJECT, flags, port);
  const { workflowCli } = dev;

  it("a 1.5 s sleep between two steps is observed in the event times", async () => {
    const { runId, settled } = await startSettling(dev.url, "nap");
    expect(await settled).toEqual({ runId, ok: true, value: "rested" });
    const [run] = await waitForRuns(dev.url, [runId], 20_000);
    expect(run!.status).toBe("completed");
    const slept = at(run!, "step_completed", "start");
    expect(slept.payload.wake_at).toBe(slept.at + 1500);
    expect(at(run!, "step_started", "woke").at - slept.at).toBeGreaterThanOrEqual(1500);
  });

  it("a run waiting for approval completes with the payload sent by `platform workflow send`", async () => {
    const { runId, settled } = await startSettling(dev.url, "approve");
    await waitUntil(dev.url, runId, (run) => run.events.some((e) => e.payload.waiting_for === "approval"));
    const sent = await workflowCli("send", runId, "approval", "--data", '{"by":"ada"}');
    expect(sent.code, sent.stderr).toBe(0);
    const [run] = await waitForRuns(dev.url, [runId], 20_000);
    expect(run!.status).toBe("completed");
    expect(run!.result).toEqual({ name: "approval", payload: { by: "ada" } });
    expect(await settled).toEqual({ runId, ok: true, value: { name: "approval", payload: { by: "ada" } } });
  });

  it("a waiting run with a 1 s timeout continues with ctx.event === null", async () => {
    const { runId, settled } = await startSettling(dev.url, "impatient");
    expect(await settled).toEqual({ runId, ok: true, value: { eventIsNull: true } });
    const [run] = await waitForRuns(dev.url, [runId], 20_000);
    expect(run!.result).toEqual({ eventIsNull: true });
    const waited = at(run!, "step_completed", "start");
    expect(waited.payload).toMatchObject({ waiting_for: "approval", timeout_at: waited.at + 1000 });
    expect(at(run!, "step_started", "decide").at).toBeGreaterThanOrEqual(waited.at + 1000);
  });

  it("a cancelled sleeping run is cancelled and its result rejects with cancelled", async () => {
    const { runId, settled } = await startSettling(dev.url, "longnap");
    await waitUntil(dev.url, runId, (run) => run.events.some((e) => e.payload.wake_at !== undefined));
    const cancelled = await workflowCli("cancel", runId, "--reason", "no longer needed");
    expect(cancelled.code, cancelled.stderr).toBe(0);
    const run = await getRun(dev.url, runId);
    expect(run.status).toBe("cancelled");
    expect(run.events.at(-1)).toMatchObject({ type: "workflow_cancelled", payload: { reason: "no longer needed" } });
    expect(await settled).toEqual({ runId, ok: false, code: "cancelled" });
  });

  it("a step throwing RetryAfterError(…, 1200) starts its next attempt at least 1.2 s later", async () => {
    const { runId, settled } = await startSettling(dev.url, "busy");
    expect(await settled).toEqual({ runId, ok: true, value: 2 });
    const [run] = await waitForRuns(dev.url, [runId], 20_000);
    expect(run!.result).toBe(2);
    const failed = at(run!, "step_failed", "start", 1);
    expect(failed.payload).toMatchObject({ retryable: true, retry_at: failed.at + 1200 });
    expect(at(run!, "step_started", "start", 2).at - failed.at).toBeGreaterThanOrEqual(1200);
  });
});
