// The same trivial workloads on Cloudflare Workflows' own local engine: the
// Engine Durable Object that Miniflare runs for a `workflows` binding, driving
// the WorkflowEntrypoint below over RPC. Plain JS for the same reason as the
// bench project (the repository's Node typecheck includes bench/).
//
// result(): the Workflows binding has no "wait for the result" call, only
// status() polling. So that start → result is measured the same way as ours
// (a push, not a poll interval), run() tells one Waiter Durable Object when it
// returns, and the route awaits that; status() is then checked (untimed) to
// confirm the engine recorded the instance as complete with the right output.
//
// Step times: each step.do callback returns Date.now() when it runs (in this
// worker's isolate; workerd's clock advances with I/O, and every step.do is
// an RPC), so step cycles are measured as for our engine: step start → next
// step start.
import { DurableObject, WorkflowEntrypoint } from "cloudflare:workers";

export class BenchWorkflow extends WorkflowEntrypoint {
  async run(event, step) {
    const { steps, waiter } = event.payload;
    const at = [];
    for (let i = 1; i <= steps; i++) {
      at.push(await step.do(`s${i}`, async () => Date.now()));
    }
    if (waiter)
      await this.env.WAITER.get(this.env.WAITER.idFromName("waiter")).done(event.instanceId, {
        steps,
        at,
        returnedAt: Date.now(),
      });
    return steps;
  }
}

/** Holds one promise per instance id; run() resolves it when it returns. One instance serves all runs. */
export class Waiter extends DurableObject {
  #pending = new Map();
  #finished = new Map();
  wait(id) {
    const finished = this.#finished.get(id);
    if (finished) {
      this.#finished.delete(id);
      return finished;
    }
    return new Promise((resolve) => this.#pending.set(id, resolve));
  }
  done(id, value) {
    const resolve = this.#pending.get(id);
    if (resolve) {
      this.#pending.delete(id);
      resolve(value);
    } else this.#finished.set(id, value);
  }
}

/**
 * No engine at all: the bare cost, in this runtime, of creating a fresh
 * SQLite-backed Durable Object and making one RPC to it. Every engine that
 * keeps one actor per run (ours and Cloudflare's) pays at least this per run.
 */
export class Probe extends DurableObject {
  ping() {
    return 1;
  }
}

let counter = 0;
const newId = () => `b${Date.now().toString(36)}${(counter++).toString(36)}${Math.random().toString(36).slice(2, 8)}`;

async function timedRun(env, steps) {
  const id = newId();
  const waiter = env.WAITER.get(env.WAITER.idFromName("waiter"));
  const t0 = Date.now();
  const instance = await env.BENCH.create({ id, params: { steps, waiter: true } });
  const started = Date.now();
  const result = await waiter.wait(id);
  const t1 = Date.now();
  return { id: instance.id, instance, t0, started, t1, ms: t1 - t0, result };
}

/** Untimed check that the engine recorded the instance complete with the expected output (bounded). */
async function confirmComplete(instance, steps) {
  for (let i = 0; i < 500; i++) {
    const status = await instance.status();
    if (status.status === "complete") {
      if (status.output !== steps)
        throw new Error(`instance ${instance.id}: output ${JSON.stringify(status.output)}, expected ${steps}`);
      return;
    }
    if (status.status === "errored" || status.status === "terminated")
      throw new Error(`instance ${instance.id}: ${JSON.stringify(status)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`instance ${instance.id} was not reported complete within 5 s of run() returning`);
}

const int = (url, name, fallback, max) => {
  const raw = url.searchParams.get(name);
  const value = raw === null ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > max) throw new Error(`${name} must be an integer 0..${max}`);
  return value;
};

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    try {
      switch (url.pathname) {
        case "/bench/ping":
          return Response.json({ ok: true, now: Date.now() });

        case "/bench/run": {
          const steps = int(url, "steps", 1000, 10_000);
          const r = await timedRun(env, steps);
          await confirmComplete(r.instance, steps);
          return Response.json({ ms: r.ms, t0: r.t0, started: r.started, t1: r.t1, stepAt: r.result.at });
        }

        case "/bench/concurrent": {
          const runs = int(url, "runs", 200, 1000);
          const steps = int(url, "steps", 10, 10_000);
          const t0 = Date.now();
          const each = await Promise.all(Array.from({ length: runs }, () => timedRun(env, steps)));
          const t1 = Date.now();
          await Promise.all(each.map((r) => confirmComplete(r.instance, steps)));
          return Response.json({ runs, steps, ms: t1 - t0, perRun: each.map((r) => r.ms) });
        }

        case "/bench/actors": {
          const n = int(url, "n", 200, 1000);
          const t0 = Date.now();
          await Promise.all(Array.from({ length: n }, () => env.PROBE.get(env.PROBE.newUniqueId()).ping()));
          return Response.json({ n, ms: Date.now() - t0 });
        }

        case "/bench/latency": {
          const n = int(url, "n", 50, 1000);
          const samples = [];
          for (let i = 0; i < n; i++) {
            const r = await timedRun(env, 1);
            await confirmComplete(r.instance, 1);
            samples.push({
              ms: r.ms,
              startMs: r.started - r.t0,
              stepAt: r.result.at[0] - r.t0,
              returnedAt: r.result.returnedAt - r.t0,
            });
          }
          return Response.json({ samples });
        }
      }
      return new Response("not found", { status: 404 });
    } catch (error) {
      return Response.json({ error: String(error?.stack ?? error) }, { status: 500 });
    }
  },
};
