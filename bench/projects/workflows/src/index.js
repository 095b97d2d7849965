// The bench project: a platform project (built by `buildProject`, like any
// user project) with trivial workflows and bench-only routes that time runs
// INSIDE the worker. Plain JS so the repository's Node typecheck, which
// includes bench/, does not try to type worker code against Node's types.
//
// Clock note: in workerd, Date.now() only advances when I/O completes, so
// every figure below is the time between I/O events as the worker saw them
// (ms resolution). Timings across the whole run are exact to 1 ms; events
// written within one synchronous stretch share one `at`.
import { workflow } from "platform";
import { signRequestToken } from "../../../../src/core/requestToken.ts";
import { meterWorkerInvocation, readStorageMeter, resetStorageMeter } from "../../../../src/objects/storageMeter.ts";

/** Longest chain a bench run may ask for. */
const MAX_STEPS = 1000;

// "chain": N trivial steps. `start` jumps into the named chain s2..s1000 so a
// run of N steps is start, s(MAX-N+2), …, s1000; no step writes anything.
const chain = {
  start: (ctx) => (ctx.data.steps <= 1 ? { done: true, result: 1 } : { step: `s${MAX_STEPS - ctx.data.steps + 2}` }),
};
for (let k = 2; k <= MAX_STEPS; k++) {
  chain[`s${k}`] = k < MAX_STEPS ? () => ({ step: `s${k + 1}` }) : () => ({ done: true, result: MAX_STEPS });
}
workflow("chain", chain, { maxAttempts: 3, stepTimeoutMS: 60_000 });

// "park": one step that holds for `holdMS`, so the run stays active (a step in
// flight) while the recovery sweep is timed.
workflow(
  "park",
  {
    start: async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, ctx.data.holdMS));
      return { done: true, result: null };
    },
  },
  { maxAttempts: 1, stepTimeoutMS: 600_000 },
);

// Scale section: runs parked without a step in flight. "sleeper" sleeps
// `parkMS` after its first step; "waiter" waits up to `parkMS` for the event
// "go". Neither first step does I/O, so each run is parked (its alarm set)
// before `workflow.start` returns.
workflow("sleeper", {
  start: (ctx) => ({ step: "woke", sleepMS: ctx.data.parkMS }),
  woke: () => ({ done: true, result: "woke" }),
});
workflow("waiter", {
  start: (ctx) => ({ step: "got", waitFor: "go", timeoutMS: ctx.data.parkMS }),
  got: (ctx) => ({ done: true, result: ctx.event?.name ?? "timed out" }),
});

// Queued starts (section Q): the same one-step run that holds `holdMS`, alone ("hold") and under
// `concurrency: { limit: 10 }` ("held10"), so the cost of queueing is the difference.
const hold = {
  start: async (ctx) => {
    await new Promise((resolve) => setTimeout(resolve, ctx.data.holdMS));
    return { done: true, result: null };
  },
};
workflow("hold", hold, { maxAttempts: 1, stepTimeoutMS: 600_000 });
workflow("held10", hold, { maxAttempts: 1, stepTimeoutMS: 600_000, concurrency: { limit: 10 } });

/** Starts `runs` runs of `name` at once and awaits them all; the start calls' times, and every run's events. */
async function queuedBatch(name, runs, holdMS) {
  const t0 = Date.now();
  const started = await Promise.all(
    Array.from({ length: runs }, async () => {
      const s0 = Date.now();
      const run = await workflow.start(name, { holdMS });
      return { run, startMs: Date.now() - s0 };
    }),
  );
  const startedAll = Date.now();
  await Promise.all(started.map(({ run }) => run.result()));
  const t1 = Date.now();
  const views = await Promise.all(started.map(({ run }) => workflow.get(run.id)));
  return {
    startAllMs: startedAll - t0,
    allResultsMs: t1 - t0,
    startMs: started.map((s) => s.startMs),
    runs: views.map((view) => view.events.map((e) => [e.type, e.at])),
  };
}
// Fan-out: "fan" starts `children` runs of "square" (one step each, each its own actor) and its next step
// counts the ones that completed.
workflow("square", { start: (ctx) => ({ done: true, result: ctx.data.n * ctx.data.n }) });
workflow(
  "fan",
  {
    start: (ctx) => ({
      step: "collect",
      children: Array.from({ length: ctx.data.children }, (_, n) => ({ workflow: "square", data: { n } })),
    }),
    collect: (ctx) => ({ done: true, result: ctx.children.filter((child) => child.status === "completed").length }),
  },
  { stepTimeoutMS: 120_000 },
);

// Streams (section T, and the meter's stream1000): one step that waits `leadMS` (its subscribers attach
// meanwhile), then publishes `messages` messages on topic "tick", `gapMS` apart, each carrying the time it
// was published on this isolate's clock, which its subscribers read too.
workflow(
  "stream",
  {
    start: async (ctx) => {
      const { messages, gapMS, leadMS } = ctx.data;
      const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
      if (leadMS > 0) await pause(leadMS);
      for (let i = 0; i < messages; i++) {
        ctx.publish("tick", { i, sentAt: Date.now() });
        if (gapMS > 0) await pause(gapMS);
      }
      return { done: true, result: messages };
    },
  },
  { maxAttempts: 1, stepTimeoutMS: 600_000 },
);

/**
 * One "stream" run read by `subscribers` subscribers (`workflow.subscribe`, topic "tick") in this worker:
 * each message's receive time minus its publish time, both on this isolate's clock (the run's actor runs in
 * the same isolate as this fetch handler, so it is one clock: workerd's, moving in whole ms with I/O).
 */
async function streamRun(subscribers, messages, gapMS, leadMS) {
  const t0 = Date.now();
  const run = await workflow.start("stream", { messages, gapMS, leadMS });
  let firstSentAt = Infinity;
  let lastSentAt = -Infinity;
  const received = await Promise.all(
    Array.from({ length: subscribers }, async () => {
      const latencies = [];
      for await (const message of workflow.subscribe(run.id, { topics: ["tick"] })) {
        latencies.push(Date.now() - message.data.sentAt);
        firstSentAt = Math.min(firstSentAt, message.data.sentAt);
        lastSentAt = Math.max(lastSentAt, message.data.sentAt);
      }
      return latencies;
    }),
  );
  const result = await run.result();
  const t1 = Date.now();
  const short = received.filter((latencies) => latencies.length !== messages).length;
  if (result !== messages || short > 0)
    throw new Error(`stream run published ${result} of ${messages}; ${short} subscribers missed messages`);
  // How long publishing took: the publisher shares the isolate's one thread with its readers here.
  const publishMs = subscribers > 0 && messages > 0 ? lastSentAt - firstSentAt : 0;
  return { runMs: t1 - t0, publishMs, latencies: received.flat() };
}

const int = (url, name, fallback, max) => {
  const raw = url.searchParams.get(name);
  const value = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new Error(`${name} must be an integer 0..${max}`);
  return value;
};

/** Start one chain run of `steps` and wait for its result; all times are the worker's. */
async function timedRun(steps) {
  const t0 = Date.now();
  const run = await workflow.start("chain", { steps });
  const started = Date.now();
  const result = await run.result();
  const t1 = Date.now();
  return { runId: run.id, t0, started, t1, ms: t1 - t0, result };
}

/** Ids of every run the index lists as running (of workflow `name`, or of all when undefined). */
async function runningRunIds(name) {
  const ids = [];
  let cursor;
  do {
    const page = await workflow.list({ name, status: "running", limit: 100, cursor });
    ids.push(...page.runs.map((r) => r.id));
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

async function sweepOnce(env) {
  const path = "/__cron/__workflow-recovery";
  const token = await signRequestToken(
    "internal",
    { method: "POST", pathAndQuery: path, body: null },
    { projectId: env.PLATFORM_PROJECT_ID, secret: env.PLATFORM_WORKER_SECRET },
  );
  const t0 = Date.now();
  const response = await env.SELF.fetch(`http://bench${path}`, {
    method: "POST",
    headers: { "X-Platform-Internal": token },
  });
  const body = await response.json();
  const t1 = Date.now();
  if (response.status !== 200) throw new Error(`sweep answered ${response.status}: ${JSON.stringify(body)}`);
  return { ms: t1 - t0, output: body.output };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    // Section M's worker invocations: every entry but the meter's own routes.
    if (!url.pathname.startsWith("/bench/meter")) meterWorkerInvocation();
    try {
      switch (url.pathname) {
        case "/bench/ping":
          return Response.json({ ok: true, now: Date.now() });

        // Section M: the actors' meter in this isolate (rows read and written, alarms), read and reset between workloads.
        case "/bench/meter":
          return Response.json(readStorageMeter());
        case "/bench/meter/reset":
          resetStorageMeter();
          return Response.json({ ok: true });

        // Section T and the meter's stream1000: one stream run and its subscribers (none: the run alone).
        case "/bench/stream":
          return Response.json(
            await streamRun(
              int(url, "subscribers", 1, 1000),
              int(url, "messages", 100, 10_000),
              int(url, "gapMS", 0, 1000),
              int(url, "leadMS", 0, 10_000),
            ),
          );

        // Section M: R runs under `concurrency: { limit: 10 }` holding `holdMS` each, all awaited.
        case "/bench/held": {
          const limited = await queuedBatch("held10", int(url, "runs", 100, 1000), int(url, "holdMS", 10, 10_000));
          return Response.json({ runs: limited.runs.length });
        }

        // Section Q: R runs holding `holdMS` each, without and with concurrency 10.
        case "/bench/queued": {
          const runs = int(url, "runs", 100, 1000);
          const holdMS = int(url, "holdMS", 50, 10_000);
          const flat = await queuedBatch("hold", runs, holdMS);
          const limited = await queuedBatch("held10", runs, holdMS);
          return Response.json({ runs, holdMS, flat, limited });
        }

        // Workload 1 and 4: one run of N steps, with its event log (type + at) for per-step deltas.
        case "/bench/run": {
          const timed = await timedRun(int(url, "steps", 1000, MAX_STEPS));
          const view = await workflow.get(timed.runId);
          return Response.json({ ...timed, events: view.events.map((e) => [e.seq, e.type, e.at]) });
        }

        // Workload 2: R concurrent runs of N steps each.
        case "/bench/concurrent": {
          const runs = int(url, "runs", 200, 1000);
          const steps = int(url, "steps", 10, MAX_STEPS);
          const t0 = Date.now();
          const each = await Promise.all(Array.from({ length: runs }, () => timedRun(steps)));
          const t1 = Date.now();
          return Response.json({ runs, steps, ms: t1 - t0, perRun: each.map((r) => r.ms) });
        }

        // Workload 3: n sequential 1-step runs, start → result() each.
        case "/bench/latency": {
          const n = int(url, "n", 50, 1000);
          const samples = [];
          for (let i = 0; i < n; i++) {
            const r = await timedRun(1);
            const view = url.searchParams.has("events") ? await workflow.get(r.runId) : null;
            samples.push({
              ms: r.ms,
              startMs: r.started - r.t0,
              ...(view ? { t0: r.t0, t1: r.t1, events: view.events.map((e) => [e.type, e.at]) } : {}),
            });
          }
          return Response.json({ samples });
        }

        // Fan-out: one parent with `children` children, parent start → parent result (worker clock).
        case "/bench/fan-out": {
          const children = int(url, "children", 1000, 1000);
          const t0 = Date.now();
          const run = await workflow.start("fan", { children });
          const t1 = Date.now();
          const completed = await run.result();
          const t2 = Date.now();
          if (completed !== children) throw new Error(`${completed} of ${children} children completed`);
          return Response.json({ children, startMs: t1 - t0, ms: t2 - t0 });
        }

        // Workload 5: make `count` runs active (a step in flight for holdMS).
        case "/bench/park": {
          const count = int(url, "count", 50, 1000);
          const holdMS = int(url, "holdMS", 600_000, 3_600_000);
          const started = await Promise.all(Array.from({ length: count }, () => workflow.start("park", { holdMS })));
          // Bounded wait until every parked run holds its step, so the sweep sees steps in flight (not stuck_created).
          const deadline = Date.now() + 15_000;
          for (const run of started) {
            for (;;) {
              const view = await workflow.get(run.id);
              if (view.events[view.events.length - 1].type === "step_started") break;
              if (Date.now() > deadline) throw new Error(`parked run ${run.id} did not start its step within 15 s`);
              await new Promise((resolve) => setTimeout(resolve, 20));
            }
          }
          return Response.json({ started: started.length });
        }

        // Scale: `runs` 1-step chain runs started at once (all starts in flight together), then all results
        // awaited. Times are the worker's clock; t0/t1/t2 let Node join several of these requests sent in parallel.
        case "/bench/burst": {
          const runs = int(url, "runs", 1000, 10_000);
          const t0 = Date.now();
          const started = await Promise.all(Array.from({ length: runs }, () => workflow.start("chain", { steps: 1 })));
          const t1 = Date.now();
          const results = await Promise.all(started.map((run) => run.result()));
          const t2 = Date.now();
          const wrong = results.filter((result) => result !== 1).length;
          if (wrong) throw new Error(`${wrong} of ${runs} burst runs did not return 1`);
          return Response.json({ runs, t0, t1, t2, startMs: t1 - t0, allMs: t2 - t0 });
        }

        // Scale: `sleepers` + `waiters` runs started at once and parked for `parkMS` (sleeping / waiting for "go").
        case "/bench/idle": {
          const sleepers = int(url, "sleepers", 500, 10_000);
          const waiters = int(url, "waiters", 500, 10_000);
          const parkMS = int(url, "parkMS", 3_600_000, 86_400_000);
          const t0 = Date.now();
          const started = await Promise.all([
            ...Array.from({ length: sleepers }, () => workflow.start("sleeper", { parkMS })),
            ...Array.from({ length: waiters }, () => workflow.start("waiter", { parkMS })),
          ]);
          const t1 = Date.now();
          // Checked after the timing: every run is parked, none has a step in flight.
          const views = await Promise.all(started.map((run) => workflow.get(run.id)));
          const sleeping = views.filter((v) => v.status === "running" && v.wakeAt).length;
          const waiting = views.filter((v) => v.status === "running" && v.waitingFor?.name === "go").length;
          if (sleeping !== sleepers || waiting !== waiters)
            throw new Error(`parked ${sleeping}/${sleepers} sleeping and ${waiting}/${waiters} waiting runs`);
          return Response.json({ sleeping, waiting, parkMs: t1 - t0 });
        }

        // Scale: send "go" to every waiting "waiter" run at once, then wait (bounded) until all completed.
        case "/bench/wake": {
          const ids = await runningRunIds("waiter");
          const t0 = Date.now();
          await Promise.all(ids.map((id) => workflow.send(id, "go")));
          const t1 = Date.now();
          const deadline = t1 + 60_000;
          let pending = ids;
          while (pending.length) {
            const views = await Promise.all(pending.map((id) => workflow.get(id)));
            pending = pending.filter((_, i) => views[i].status !== "completed");
            if (pending.length && Date.now() > deadline)
              throw new Error(`${pending.length} woken runs not done in 60 s`);
            if (pending.length) await new Promise((resolve) => setTimeout(resolve, 20));
          }
          const t2 = Date.now();
          return Response.json({ woken: ids.length, sendMs: t1 - t0, doneMs: t2 - t0 });
        }

        // Scale: cancel `count` running runs of workflow `name` at once.
        case "/bench/cancel": {
          const name = url.searchParams.get("name") ?? "sleeper";
          const ids = (await runningRunIds(name)).slice(0, int(url, "count", 250, 10_000));
          const t0 = Date.now();
          await Promise.all(ids.map((id) => workflow.cancel(id, "bench")));
          return Response.json({ cancelled: ids.length, ms: Date.now() - t0 });
        }

        // Scale: how many runs the index lists as running (every page).
        case "/bench/running":
          return Response.json({ running: (await runningRunIds(undefined)).length });

        case "/bench/active":
          return Response.json({ active: (await workflow.list({ status: "running", limit: 100 })).runs.length });

        // Workload 5: time the recovery cron through the real internal route, `times` times.
        case "/bench/sweep": {
          const times = int(url, "times", 5, 50);
          const samples = [];
          for (let i = 0; i < times; i++) samples.push(await sweepOnce(env));
          return Response.json({ samples });
        }
      }
      return new Response("not found", { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
