import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  getRun,
  initProject,
  killTree,
  RUN_ROUTES,
  type RunView,
  killedAfterEach,
  devBackends,
} from "#test/support/e2e/index.ts";
import { startDev, startRuns, useWorkDir, waitForRuns } from "#test/support/e2e/index.ts";

// Ports of this file: 8893 (workerd), 8894 (Node); 8932 (workerd), 8933 (Node) for the slow step.
const work = useWorkDir("platform-e2e-crash-");

const running = killedAfterEach();

const STEPS = 200;
const RUNS = 4;

// STEPS short steps: each awaits ~5 ms and counts itself in the scratchpad, so
// the result proves every step's write was committed exactly once.
const LONG_PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

const STEPS = ${STEPS};
const stepName = (i) => (i === 0 ? "start" : "s" + i);
const steps = {};
for (let i = 0; i < STEPS; i++) {
  steps[stepName(i)] = async (ctx) => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    ctx.write("count", (ctx.scratchpad.count ?? 0) + 1);
    return i === STEPS - 1 ? { done: true, result: { count: (ctx.scratchpad.count ?? 0) + 1 } } : { step: stepName(i + 1) };
  };
}
workflow("long", steps, { maxAttempts: 5, backoff: { initialMS: 20, maxMS: 200, factor: 2 }, stepTimeoutMS: 1_000 });
${RUN_ROUTES}`;

const stepName = (i: number) => (i === 0 ? "start" : `s${i}`);

function completedSteps(run: RunView): number {
  return run.events.filter((event) => event.type === "step_completed").length;
}

/** The platform's guarantees for one run, after a crash and a restart. */
function expectIntactRun(run: RunView): void {
  expect(run.status, `run ${run.id}`).toBe("completed");
  expect(run.result).toEqual({ count: STEPS });
  // The log is one gap-free sequence.
  expect(run.events.map((event) => event.seq)).toEqual(run.events.map((_, i) => i + 1));
  // Every step completed exactly once.
  const completions = new Map<string, number>();
  for (const event of run.events) {
    if (event.type === "step_completed")
      completions.set(event.payload.step as string, (completions.get(event.payload.step as string) ?? 0) + 1);
  }
  const counts = Array.from({ length: STEPS }, (_, i) => completions.get(stepName(i)) ?? 0);
  expect(
    counts.filter((count) => count !== 1),
    `step_completed counts of run ${run.id}`,
  ).toEqual([]);
  expect(completions.size).toBe(STEPS);
  // Never partially terminal: the final step_completed is followed by workflow_completed, and by nothing else.
  run.events.forEach((event, i) => {
    if (event.type === "step_completed" && event.payload.next_step === undefined) {
      expect(run.events[i + 1]?.type, `after the final step_completed of run ${run.id}`).toBe("workflow_completed");
    }
  });
  expect(run.events.filter((event) => event.type === "workflow_completed")).toHaveLength(1);
  expect(run.events.at(-1)?.type).toBe("workflow_completed");
  // Whatever was cut off was recorded as a retryable failure, never lost or final.
  for (const event of run.events.filter((e) => e.type === "step_failed")) {
    expect(event.payload).toMatchObject({ retryable: true });
  }
}

describe.each(devBackends(8893))("a workflow survives SIGKILL of %s", (_backend, flags, port) => {
  it(`finishes every run with each of ${STEPS} steps completed exactly once after a restart`, async () => {
    const dir = path.join(work, `long-${port}`);
    await initProject(dir, LONG_PROJECT);
    const args = [dir, ...flags, "--port", String(port)];

    const first = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(first);
    const runIds = await startRuns(first.url, "long", RUNS);

    // Kill in the middle: once the runs are well under way and none has finished.
    const deadline = Date.now() + 30_000;
    let before: RunView[] = [];
    for (;;) {
      before = await Promise.all(runIds.map((id) => getRun(first.url, id)));
      if (before.every((run) => completedSteps(run) >= 10)) break;
      if (Date.now() > deadline)
        throw new Error(`The runs made no progress: ${before.map(completedSteps).join(", ")} steps`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const killed = await killTree(first.child.pid!);
    expect(killed.length).toBeGreaterThan(1);
    // The crash really cut the runs off part way.
    expect(before.every((run) => run.status === "running" && completedSteps(run) < STEPS)).toBe(true);

    const second = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(second);
    const after = await waitForRuns(second.url, runIds, 60_000);
    for (const run of after) expectIntactRun(run);
    // The restarted platform swept for stuck runs at start-up (workerd: through the project's recovery cron).
    await second.waitFor(
      flags.includes("--node") ? /Re-enqueued \d+ workflow\(s\)/ : /Recovery sweep: Re-enqueued \d+ workflow\(s\)/,
      30_000,
    );
    // Progress made before the crash was kept, not redone.
    after.forEach((run, i) => {
      const kept = before[i]!.events;
      expect(run.events.slice(0, kept.length)).toEqual(kept);
    });

    const stopped = await second.stop("SIGTERM");
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(5_000);
  });
});

// Issue 14: SIGKILL in the middle of a 10 s step whose stepTimeoutMS is 30 s. The restarted
// platform knows that attempt's executor is gone: it records one step_failed "interrupted" at once
// and retries, where waiting out the timeout would record it, and retry, 30 s after the attempt was
// claimed. Read from the log's own times, so a slow start of workerd on a loaded machine moves both
// sides alike.
const SLOW_PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("slow", {
  start: async () => ({ step: "crunch" }),
  crunch: async (ctx) => {
    // Only the attempt the test kills is slow: the retry has nothing left to prove by waiting.
    if (ctx.attempt === 1) await new Promise((resolve) => setTimeout(resolve, 10_000));
    return { done: true, result: { attempt: ctx.attempt } };
  },
}, { maxAttempts: 3, stepTimeoutMS: 30_000, backoff: { initialMS: 100, maxMS: 1_000, factor: 2 } });
${RUN_ROUTES}`;

describe.each(devBackends(8932))("SIGKILL of %s in the middle of a 10 s step", (_backend, flags, port) => {
  it("records one step_failed interrupted at once and retries without waiting out the step timeout", async () => {
    const dir = path.join(work, `slow-${port}`);
    await initProject(dir, SLOW_PROJECT);
    const args = [dir, ...flags, "--port", String(port)];

    const first = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(first);
    const [runId] = await startRuns(first.url, "slow");
    // Kill once the 10 s step has run for a while.
    const deadline = Date.now() + 20_000;
    let claimed: RunView["events"][number] | undefined;
    while (!claimed) {
      claimed = (await getRun(first.url, runId!)).events.find(
        (e) => e.type === "step_started" && e.payload.step === "crunch",
      );
      if (Date.now() > deadline) throw new Error("The slow step never started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await killTree(first.child.pid!);

    const restartedAt = Date.now();
    const second = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(second);
    const [run] = await waitForRuns(second.url, [runId!], 60_000);
    // Said on failure: where the time after the restart went.
    const timings = `attempt 1 claimed ${restartedAt - claimed.at} ms before the restart; events ${JSON.stringify(run!.events.map((e) => [e.type, e.at - restartedAt]))}`;
    expect(run!.status, timings).toBe("completed");
    const failures = run!.events.filter((e) => e.type === "step_failed");
    expect(failures, timings).toHaveLength(1);
    expect(failures[0]!.payload).toMatchObject({ step: "crunch", attempt: 1, reason: "interrupted", retryable: true });
    // Recorded by the restarted platform, and retried, before the attempt's 30 s timeout.
    const retried = run!.events.find((e) => e.type === "step_started" && e.payload.attempt === 2)!;
    expect(failures[0]!.at, timings).toBeGreaterThanOrEqual(restartedAt);
    expect(failures[0]!.at, timings).toBeLessThan(claimed.at + 30_000);
    expect(retried.at, timings).toBeLessThan(claimed.at + 30_000);
    expect(run!.result).toEqual({ attempt: 2 });

    expect((await second.stop("SIGTERM")).code).toBe(0);
  });
});
