import { existsSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { descendantsOf, describeProcess, type DevProcess, getRun, initProject } from "#test/support/e2e/index.ts";
import { isAlive, RUN_ROUTES, runCli, shape, startDev, startRuns, useWorkDir } from "#test/support/e2e/index.ts";
import { waitForRuns } from "#test/support/e2e/index.ts";

// Ports of this file: 8891-8892.
const work = useWorkDir("platform-e2e-node-");

const running: DevProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((dev) => dev.stop("SIGKILL")));
});

async function dev(args: string[]): Promise<DevProcess> {
  const started = await startDev(args, { readyTimeoutMs: 30_000 });
  running.push(started);
  return started;
}

const FLAKY_PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

// The first attempt of "start" fails; the retry succeeds and hands over to "finish".
workflow(
  "flaky",
  {
    start: async (ctx) => {
      if (ctx.attempt === 1) throw new Error("the payment service timed out");
      ctx.write("charged", ctx.data.item);
      return { step: "finish" };
    },
    finish: async (ctx) => ({ done: true, result: { shipped: ctx.scratchpad.charged } }),
  },
  { maxAttempts: 3, backoff: { initialMS: 50, maxMS: 200, factor: 2 }, stepTimeoutMS: 5_000 },
);
${RUN_ROUTES}`;

describe("platform dev --node", () => {
  it("documents what --node runs and what it does not", async () => {
    const help = await runCli(["dev", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: platform dev [dir] [--port N] [--node]");
    expect(help.stdout).toMatch(/--node\s+run the project in this plain Node 22 process/);
    expect(help.stdout).toContain("node:sqlite");
    expect(help.stdout).toMatch(/does not run the\s+gateway/);
    expect(help.stdout).toMatch(/API worker/);
  });

  it("runs a workflow project in Node: the expected event sequence, state across restarts, SIGTERM within 5 s leaving no process", async () => {
    const dir = path.join(work, "flaky-app");
    await initProject(dir, FLAKY_PROJECT);

    const first = await dev([dir, "--node", "--port", "8891"]);
    expect(first.url).toBe("http://127.0.0.1:8891");
    expect(await (await fetch(first.url + "/")).text()).toBe("workflow test project");
    // Internal routes stay closed to external callers here too.
    expect((await fetch(first.url + "/__workflow/runs")).status).toBe(404);
    expect(first.output()).toMatch(/Re-enqueued 0 workflow\(s\)/);
    expect(first.output()).not.toMatch(/ExperimentalWarning/);

    const [runId] = await startRuns(first.url, "flaky", 1, { item: "coffee" });
    // A margin for a loaded machine: the retry waits 50 ms of backoff, the rest is startup and polling.
    const [run] = await waitForRuns(first.url, [runId!], 30_000);
    expect(run).toMatchObject({ status: "completed", result: { shipped: "coffee" } });
    expect(shape(run!.events)).toEqual([
      "workflow_created",
      "step_started(start,1)",
      "step_failed(start,1,retryable)",
      "step_started(start,2)",
      "step_completed(start->finish)",
      "step_started(finish,1)",
      "step_completed(finish)",
      "workflow_completed",
    ]);
    expect(run!.events[2]!.payload.reason).toBe("the payment service timed out");
    expect(existsSync(path.join(dir, ".platform/node/workflows.sqlite"))).toBe(true);

    const processes = [first.child.pid!, ...descendantsOf(first.child.pid!)];
    const stopped = await first.stop("SIGTERM");
    expect(stopped.ms).toBeLessThan(5_000);
    expect(stopped.code).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(processes.filter(isAlive).map(describeProcess)).toEqual([]);

    // Second start: the run is still there, untouched, and listed.
    const second = await dev([dir, "--node", "--port", "8891"]);
    expect(await getRun(second.url, runId!)).toEqual(run);
    const list = (await (await fetch(second.url + "/runs")).json()) as { runs: { id: string; status: string }[] };
    expect(list.runs).toEqual([expect.objectContaining({ id: runId, status: "completed" })]);
    const stoppedAgain = await second.stop("SIGINT");
    expect(stoppedAgain.code).toBe(0);
    expect(stoppedAgain.ms).toBeLessThan(5_000);
  });

  it("rebuilds on change and keeps serving the previous version when a build fails", async () => {
    const dir = path.join(work, "rebuild-app");
    await initProject(dir, `export default { fetch: () => new Response("version 1") };\n`);
    const server = await dev([dir, "--node", "--port", "8892"]);
    expect(await (await fetch(server.url + "/")).text()).toBe("version 1");

    writeFileSync(path.join(dir, "src/index.ts"), `export default { fetch: () => new Response("version 2") };\n`);
    await server.waitFor(/Rebuilt in \d+ ms/, 10_000);
    expect(await (await fetch(server.url + "/")).text()).toBe("version 2");

    writeFileSync(path.join(dir, "src/index.ts"), `export default { fetch: () => new Response("broken" };\n`);
    await server.waitFor(/Build failed, still serving the previous version/, 10_000);
    expect(await (await fetch(server.url + "/")).text()).toBe("version 2");
  });

  it("bundles platform/node for Node, while under workerd the same project serves 503 with the native-SQLite message", async () => {
    const dir = path.join(work, "uses-node-store");
    await initProject(
      dir,
      `import { openSqliteWorkflowStore } from "platform/node";
const store = openSqliteWorkflowStore(":memory:");
export default { fetch: () => Response.json({ runs: store.listRuns({ limit: 10 }).runs.length }) };
`,
    );
    // Under workerd the project cannot start: platform dev says why, with the source line, and its
    // address answers 503 with the same message while the console and the API run.
    const worker = await dev([dir, "--port", "8892"]);
    await worker.waitFor(/Its address answers 503/);
    const [, said] = /The project does not run: (.*)\n/.exec(worker.output()) ?? [];
    expect(said).toContain("native SQLite addon must not be imported in worker builds");
    expect(worker.output()).toMatch(/src\/index\.ts:1:\d+/);
    const page = await fetch(worker.url + "/", { headers: { accept: "application/json" } });
    expect(page.status).toBe(503);
    expect(await page.text()).toContain("native SQLite addon must not be imported in worker builds");
    await worker.stop();
    running.splice(running.indexOf(worker), 1);

    const node = await dev([dir, "--node", "--port", "8892"]);
    expect(await (await fetch(node.url + "/")).json()).toEqual({ runs: 0 });
  });
});
