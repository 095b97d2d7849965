import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import { type DevProcess, describeProcess, descendantsOf, isAlive, runCli, startDev } from "./cliProcess.ts";

/** What `workflow.get` answers (the parts these tests read). */
export interface RunView {
  id: string;
  workflowId: string;
  name: string;
  status: "queued" | "running" | "waiting" | "completed" | "failed" | "cancelled";
  result?: unknown;
  error?: string;
  events: { seq: number; type: string; payload: Record<string, unknown>; at: number }[];
}

/** The events of a run of two steps whose first fails once and is retried. */
export const RETRIED_TWO_STEP_RUN = [
  "workflow_created",
  "step_started",
  "step_failed",
  "step_started",
  "step_completed",
  "step_started",
  "step_completed",
  "workflow_completed",
];

/** `platform init <dir>`, then the project's src/index.ts replaced by `source`. */
export async function initProject(dir: string, source: string): Promise<void> {
  const init = await runCli(["init", dir]);
  if (init.code !== 0) throw new Error(`platform init failed: ${init.stderr}`);
  writeFileSync(path.join(dir, "src/index.ts"), source);
}

/**
 * Routes every workflow test project shares: start runs, read one, list them.
 * `POST /runs/:name?count=N` with an optional JSON body as the start data.
 */
export const RUN_ROUTES = `
const router = Router();
router.get("/", () => new Response("workflow test project"));
router.post("/runs/:name", async (request) => {
  const count = Number(new URL(request.url).searchParams.get("count") ?? 1);
  const text = await request.text();
  const data = text ? JSON.parse(text) : null;
  const runIds = [];
  for (let i = 0; i < count; i++) runIds.push((await workflow.start(request.params.name, data)).id);
  return Response.json({ runIds }, { status: 201 });
});
router.get("/runs/:runId", async ({ params }) => {
  const run = await workflow.get(params.runId);
  return run ? Response.json(run) : Response.json({ error: { code: "not_found", message: "no such run" } }, { status: 404 });
});
router.get("/runs", async ({ query }) => Response.json(await workflow.list({ limit: 100, ...(query.status ? { status: query.status } : {}) })));
export default router;
`;

export async function startRuns(url: string, name: string, count = 1, data?: unknown): Promise<string[]> {
  const response = await fetch(`${url}/runs/${name}?count=${count}`, {
    method: "POST",
    body: data === undefined ? undefined : JSON.stringify(data),
  });
  if (response.status !== 201)
    throw new Error(`starting ${name} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { runIds: string[] }).runIds;
}

export async function getRun(url: string, runId: string): Promise<RunView> {
  const response = await fetch(`${url}/runs/${encodeURIComponent(runId)}`);
  if (response.status !== 200)
    throw new Error(`GET run ${runId} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as RunView;
}

/** Polls the project's own route until every run is terminal. */
export async function waitForRuns(url: string, runIds: string[], timeoutMS = 30_000): Promise<RunView[]> {
  const deadline = Date.now() + timeoutMS;
  for (;;) {
    const runs = await Promise.all(runIds.map((id) => getRun(url, id)));
    if (runs.every((run) => !["queued", "running", "waiting"].includes(run.status))) return runs;
    if (Date.now() > deadline) {
      const progress = runs
        .map((run) => `${run.id}: ${run.status}, last ${JSON.stringify(run.events.at(-1))}`)
        .join("\n");
      throw new Error(`Runs still running after ${timeoutMS / 1000} s:\n${progress}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** SIGKILLs a process and every descendant (workerd, esbuild, a re-exec'd Node), then waits until none is running. */
export async function killTree(pid: number): Promise<number[]> {
  const all = [pid, ...descendantsOf(pid)];
  // Parent first, so nothing left can respawn or reap-and-replace a child.
  for (const target of all) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // already gone
    }
  }
  const deadline = Date.now() + 5_000;
  while (all.some(isAlive)) {
    if (Date.now() > deadline)
      throw new Error(`Still running after SIGKILL: ${all.filter(isAlive).map(describeProcess).join(", ")}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return all;
}

/** `platform dev` on each backend, as `[name, flags, port]` rows for describe.each: workerd on `port`, Node on the next. */
export function devBackends(port: number): [name: string, flags: string[], port: number][] {
  return [
    ["platform dev (workerd)", [], port],
    ["platform dev --node", ["--node"], port + 1],
  ];
}

/**
 * `project` at `dir` under `platform dev <flags> --port <port>` for the tests of a describe block: started
 * before them, stopped after. Answers its URL (read it inside a test) and `platform workflow … --dir <dir>`.
 */
export function useDevProject(dir: string, project: string, flags: string[], port: number) {
  let dev: DevProcess | undefined;
  beforeAll(async () => {
    await initProject(dir, project);
    dev = await startDev([dir, ...flags, "--port", String(port)], { readyTimeoutMs: 60_000 });
  });
  afterAll(async () => {
    await dev?.stop("SIGTERM");
  });
  return {
    get url(): string {
      if (!dev) throw new Error(`platform dev for ${dir} did not start`);
      return dev.url;
    },
    /** What `platform dev` printed so far: a failing test quotes its tail. */
    output: (): string => dev?.output() ?? "",
    workflowCli: (...args: string[]) => runCli(["workflow", ...args, "--dir", dir]),
  };
}

/** The `platform dev` processes a test pushes here; after each test, those still running are killed with their trees. */
export function killedAfterEach(): DevProcess[] {
  const running: DevProcess[] = [];
  afterEach(async () => {
    for (const dev of running.splice(0))
      if (dev.child.exitCode === null && dev.child.signalCode === null) await killTree(dev.child.pid!);
  });
  return running;
}
