// The chaos suite's project (docs/guarantees.md, "The chaos suite"): composed workloads whose every step appends an
// attempt to the driver's ledger, outside the platform. Copied into a fresh `platform init` project.
import { Router } from "itty-router";
import { workflow } from "platform";

// Rewritten per push by the driver (chaosProjectSource.ts): the build is the compatible change each push makes
// (every attempt reports which build ran it); `platform up` has no .dev.vars, so its ledger address is written here.
const BUILD = 0;
const LEDGER_URL = null;

// Generous: a SIGSTOP or a restart must cost a retry, never the run.
const policy = { maxAttempts: 30, backoff: { initialMS: 50, maxMS: 1_000, factor: 2 }, stepTimeoutMS: 20_000 };
const LONG_STEPS = 30;

/** Records this attempt in the external ledger; a failed append fails the attempt, which is retried. */
async function ledger(ctx, step = ctx.step) {
  const response = await fetch(`${LEDGER_URL ?? ctx.env.CHAOS_LEDGER_URL}/attempts`, {
    method: "POST",
    body: JSON.stringify({ runId: ctx.runId, step, attempt: ctx.attempt, build: BUILD }),
  });
  if (!response.ok) throw new Error(`the ledger answered ${response.status}`);
}

workflow(
  "child",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "finish" };
    },
    finish: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: { n: ctx.data.n * 2 } };
    },
  },
  policy,
);

// Its result lists each child's run id and result, which the checker compares with the children's own logs.
workflow(
  "parent",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "collect", children: ctx.data.children.map((n) => ({ workflow: "child", data: { n } })) };
    },
    collect: async (ctx) => {
      await ledger(ctx);
      return {
        done: true,
        result: { children: ctx.children.map((c) => ({ runId: c.runId, result: c.result ?? null })) },
      };
    },
  },
  policy,
);

const KEYED_LIMIT = 2;
workflow(
  "keyed",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "work", sleepMS: 100 };
    },
    work: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: { tenant: ctx.data.tenant } };
    },
  },
  { ...policy, concurrency: { limit: KEYED_LIMIT, key: () => "chaos", fairness: (data) => data.tenant } },
);

// Waits for an event, then for another run; the timeouts are a backstop for a send that never landed.
workflow(
  "waiter",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "heard", waitFor: "go", timeoutMS: 120_000 };
    },
    heard: async (ctx) => {
      await ledger(ctx);
      ctx.write("token", ctx.event?.payload.token ?? null);
      return { step: "joined", waitForRun: ctx.data.target, timeoutMS: 120_000 };
    },
    joined: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: { token: ctx.scratchpad.token, awaited: ctx.awaited?.status ?? null } };
    },
  },
  policy,
);

workflow(
  "debounced",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: ctx.data };
    },
  },
  { ...policy, debounce: { periodMS: 300, key: (data) => data.user } },
);

workflow(
  "idem",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: ctx.data };
    },
  },
  policy,
);

// Started by `workflow.send(id, "ping", payload, { start })`: takes its first ping, then one more or a timeout.
workflow(
  "inbox",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "first", waitFor: "ping", timeoutMS: 60_000 };
    },
    first: async (ctx) => {
      await ledger(ctx);
      return { step: "second", waitFor: "ping", timeoutMS: 2_000 };
    },
    second: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: { pings: ctx.event === null ? 1 : 2 } };
    },
  },
  policy,
);

workflow(
  "ticker",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { done: true, result: { at: ctx.data.scheduledAt } };
    },
  },
  { ...policy, schedule: "* * * * *" },
);

// Its first attempt outlives its step timeout: the late result must be dropped, the retry committed once.
workflow(
  "slow",
  {
    start: async (ctx) => {
      await ledger(ctx);
      if (ctx.attempt === 1) await new Promise((resolve) => setTimeout(resolve, 1_500));
      return { done: true, result: { attempt: ctx.attempt } };
    },
  },
  { ...policy, stepTimeoutMS: 500 },
);

const longSteps = {};
const longStep = (i) => (i === 0 ? "start" : `s${i}`);
for (let i = 0; i < LONG_STEPS; i++) {
  longSteps[longStep(i)] = async (ctx) => {
    await ledger(ctx);
    const count = (ctx.scratchpad.count ?? 0) + 1;
    ctx.write("count", count);
    return i === LONG_STEPS - 1 ? { done: true, result: { count, steps: LONG_STEPS } } : { step: longStep(i + 1) };
  };
}
workflow("long", longSteps, policy);

// Fails for good at its last step: its completed reserve and charge are rolled back, latest first, each once.
const rollBack = (ctx) => ledger(ctx, `rollback:${ctx.step}`);
workflow(
  "rolled",
  {
    start: async (ctx) => {
      await ledger(ctx);
      return { step: "reserve" };
    },
    reserve: async (ctx) => {
      await ledger(ctx);
      return { step: "charge" };
    },
    charge: async (ctx) => {
      await ledger(ctx);
      return { step: "ship" };
    },
    ship: async (ctx) => {
      await ledger(ctx);
      throw new Error("the carrier refused the parcel");
    },
  },
  {
    ...policy,
    stepOptions: { ship: { maxAttempts: 1 } },
    rollback: { reserve: rollBack, charge: rollBack },
    rollbackOptions: policy,
  },
);

const json = async (request) => {
  const text = await request.text();
  return text ? JSON.parse(text) : null;
};

const router = Router();
router.post("/start/:name", async (request) => {
  const { data, options } = await json(request);
  const run = await workflow.start(request.params.name, data, options ?? {});
  return Response.json({ runId: run.id }, { status: 201 });
});
router.post("/send/:runId/:event", async (request) => {
  await workflow.send(request.params.runId, request.params.event, await json(request));
  return Response.json({ sent: true });
});
router.post("/send-start/:workflowId/:event", async (request) => {
  const { payload, start } = await json(request);
  return Response.json(await workflow.send(request.params.workflowId, request.params.event, payload, { start }));
});
router.get("/runs/:runId", async ({ params }) => {
  const run = await workflow.get(params.runId);
  return run ? Response.json(run) : Response.json({ error: { code: "not_found" } }, { status: 404 });
});
// Every run of the project, as { id, status }, read page by page.
router.get("/runs", async () => {
  const runs = [];
  let cursor = "";
  do {
    const page = await workflow.list({ limit: 100, ...(cursor ? { cursor } : {}) });
    for (const run of page.runs) runs.push({ id: run.id, status: run.status });
    cursor = page.cursor;
  } while (cursor);
  return Response.json({ runs });
});
export default router;
