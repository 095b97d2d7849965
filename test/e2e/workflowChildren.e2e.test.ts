import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  getRun,
  initProject,
  killTree,
  RUN_ROUTES,
  type RunView,
  startDev,
  startRuns,
  waitForRuns,
  useWorkDir,
  killedAfterEach,
  devBackends,
} from "#test/support/e2e/index.ts";

// Ports of this file: 8970 (workerd), 8971 (Node) for the crash; 8972 (workerd), 8973 (Node) for the cancel.
const work = useWorkDir("platform-e2e-children-");

const running = killedAfterEach();

const CHILDREN = 20;

// Beside RUN_ROUTES: cancel a run, and list every run of a workflow.
const MORE_ROUTES = `router.post("/cancel/:runId", async ({ params }) => Response.json(await workflow.cancel(params.runId, "stop")));
router.get("/list/:name", async ({ params }) => {
  const runs = [];
  let cursor;
  do {
    const page = await workflow.list({ name: params.name, limit: 100, ...(cursor ? { cursor } : {}) });
    runs.push(...page.runs);
    cursor = page.cursor;
  } while (cursor);
  return Response.json(runs);
});
export default router;`;

// A parent fans out to `count` children, each squaring its n after `ms`; the parent's next step reads
// their outcomes in order. A cancel route lets the test cancel a parent mid fan-out.
const PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("square", {
  start: async (ctx) => {
    await new Promise((resolve) => setTimeout(resolve, ctx.data.ms));
    return { done: true, result: ctx.data.n * ctx.data.n };
  },
}, { stepTimeoutMS: 120_000 });
workflow("fan", {
  start: async (ctx) => ({
    step: "collect",
    children: Array.from({ length: ctx.data.count }, (_, n) => ({ workflow: "square", data: { n, ms: ctx.data.ms } })),
  }),
  collect: async (ctx) => ({ done: true, result: ctx.children.map((child) => [child.status, child.result]) }),
});
${RUN_ROUTES.replace("export default router;", MORE_ROUTES)}`;

async function runsNamed(url: string, name: string): Promise<{ id: string; status: string; workflowId: string }[]> {
  const response = await fetch(`${url}/list/${name}`);
  if (response.status !== 200) throw new Error(`listing ${name} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as { id: string; status: string; workflowId: string }[];
}

/** The parent's view once its step has recorded its children and `check` holds. */
async function parentWhen(url: string, runId: string, check: (view: RunView) => boolean): Promise<RunView> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const view = await getRun(url, runId);
    if (check(view)) return view;
    if (Date.now() > deadline) throw new Error(`The parent never got there: ${JSON.stringify(view.events.at(-1))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

type FamilyView = RunView & { children?: { runId: string; status: string }[]; parentRunId?: string };

describe.each(devBackends(8970))("a fan-out to %s", (_backend, flags, port) => {
  it(`survives SIGKILL mid fan-out: exactly ${CHILDREN} children, and the parent reads their results in order`, async () => {
    const dir = path.join(work, `fan-${port}`);
    await initProject(dir, PROJECT);
    const args = [dir, ...flags, "--port", String(port)];

    const first = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(first);
    const [parentId] = await startRuns(first.url, "fan", 1, { count: CHILDREN, ms: 5_000 });
    // Killed while the children run: the parent waits for them.
    const waiting = (await parentWhen(first.url, parentId!, (view) => view.events.length >= 3)) as FamilyView;
    expect(waiting.children).toHaveLength(CHILDREN);
    await killTree(first.child.pid!);
    expect(waiting).toMatchObject({ status: "waiting", waitingForChildren: { total: CHILDREN } });

    const second = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(second);
    const [parent] = (await waitForRuns(second.url, [parentId!], 90_000)) as FamilyView[];
    expect(parent!.status).toBe("completed");
    expect(parent!.result).toEqual(Array.from({ length: CHILDREN }, (_, n) => ["completed", n * n]));
    // Exactly the children the parent recorded, each started once and each naming its parent.
    const squares = await runsNamed(second.url, "square");
    expect(squares.map((run) => run.id).sort()).toEqual(waiting.children!.map((child) => child.runId).sort());
    expect(new Set(squares.map((run) => run.workflowId)).size).toBe(CHILDREN);
    const child = (await getRun(second.url, waiting.children![7]!.runId)) as FamilyView;
    expect(child).toMatchObject({ status: "completed", result: 49, parentRunId: parentId });
    expect(parent!.events.filter((event) => event.type === "child_finished")).toHaveLength(CHILDREN);

    expect((await second.stop("SIGTERM")).code).toBe(0);
  });
});

describe.each(devBackends(8972))("cancelling a parent mid fan-out on %s", (_backend, flags, port) => {
  it("cancels its running children", async () => {
    const dir = path.join(work, `cancel-${port}`);
    await initProject(dir, PROJECT);
    const dev = await startDev([dir, ...flags, "--port", String(port)], { readyTimeoutMs: 60_000 });
    running.push(dev);
    const [parentId] = await startRuns(dev.url, "fan", 1, { count: 5, ms: 60_000 });
    const waiting = (await parentWhen(dev.url, parentId!, (view) => view.events.length >= 3)) as FamilyView;
    const cancelled = await fetch(`${dev.url}/cancel/${encodeURIComponent(parentId!)}`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    const children = (await waitForRuns(
      dev.url,
      waiting.children!.map((child) => child.runId),
      20_000,
    )) as FamilyView[];
    expect(children.map((child) => child.status)).toEqual(Array(5).fill("cancelled"));
    expect(children.every((child) => child.parentRunId === parentId)).toBe(true);
    expect((await getRun(dev.url, parentId!)).status).toBe("cancelled");
    expect((await runsNamed(dev.url, "square")).map((run) => run.status)).toEqual(Array(5).fill("cancelled"));
    expect((await dev.stop("SIGTERM")).code).toBe(0);
  });
});
