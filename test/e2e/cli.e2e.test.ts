import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  descendantsOf,
  describeProcess,
  isAlive,
  runCli,
  startDev,
  systemNode,
  useWorkDir,
} from "#test/support/e2e/index.ts";
import { NATIVE_SQLITE_MESSAGE } from "#src/dev/cli/build/nativeSqliteGuard.ts";

const work = useWorkDir("platform-e2e-");

describe("platform CLI", () => {
  it.each([["init"], ["dev"], ["push"]])("`platform %s --help` prints usage and exits 0", async (command) => {
    const result = await runCli([command, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`Usage: platform ${command}`);
  });

  it.each([
    [["frobnicate"], /Unknown command "frobnicate"/],
    [["constructor"], /Unknown command "constructor"/],
    [["init"], /exactly one directory/],
    [["dev", "--port", "nope"], /--port must be a port number/],
    [["push", "--bogus"], /Unknown option --bogus\. Usage: platform push/],
  ])("`platform %j` fails with one line and a non-zero exit", async (args, message) => {
    const result = await runCli(args);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  // Node's module log (NODE_DEBUG=module) names every CommonJS package a process loads, Miniflare included.
  it.each([
    [["workflow", "--help"], false],
    [["plugin", "trigger", "--help"], false],
    [["init", "--help"], false],
    [["dev", "--help"], true],
  ])("`platform %j` loads Miniflare: %s (a command's modules load only when it runs)", async (args, loads) => {
    const result = await runCli(args, { env: { NODE_DEBUG: "module" } });
    expect(result.code).toBe(0);
    expect(/load "[^"]*\/node_modules\/miniflare\//.test(result.stderr)).toBe(loads);
  });

  it("runs under the system Node (a plain shell's `npx platform`) by re-running itself on the repository's Node 22", async () => {
    const node = systemNode();
    expect(node, "a system node on PATH").not.toBeNull();
    const result = await runCli(["--help"], { node: node! });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Usage: platform <command>");
  });

  it("refuses to init into a directory that is not empty", async () => {
    const dir = path.join(work, "full");
    await runCli(["init", dir]);
    const again = await runCli(["init", dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/is not empty/);
  });
});

describe("platform init + dev on a project outside the repository", () => {
  it("answers on /, rebuilds on change, keeps state across restarts and stops on SIGTERM within 5 s leaving no process", async () => {
    const dir = path.join(work, "hello-app");
    const init = await runCli(["init", dir]);
    expect(init.code).toBe(0);
    expect(existsSync(path.join(dir, "node_modules"))).toBe(false);

    const dev = await startDev([dir, "--port", "8877"], { node: systemNode()! });
    expect(dev.url).toBe("http://127.0.0.1:8877");
    const home = await fetch(dev.url + "/");
    expect(home.status).toBe(200);
    expect(await home.text()).toContain("Hello from hello-app");
    expect(await (await fetch(dev.url + "/api/hello/Ada")).json()).toEqual({ hello: "Ada" });
    const bad = await fetch(dev.url + "/api/hello/%3Cscript%3E");
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_input" } });

    // External requests never reach internal routes.
    for (const internal of [
      "/__workflow/x/execute",
      "/__cron/__workflow-recovery",
      "/__plugin/chatserver",
      "/__platform/metadata",
    ]) {
      expect((await fetch(dev.url + internal, { method: "POST" })).status).toBe(404);
    }

    const source = path.join(dir, "src/index.ts");
    writeFileSync(source, readFileSync(source, "utf8").replace("Hello from", "Changed:"));
    await dev.waitFor(/Rebuilt in \d+ ms/);
    expect(await (await fetch(dev.url + "/")).text()).toContain("Changed: hello-app");

    const processes = [dev.child.pid!, ...descendantsOf(dev.child.pid!)];
    expect(processes.length).toBeGreaterThan(1);
    const stopped = await dev.stop("SIGTERM");
    expect(stopped.ms).toBeLessThan(5_000);
    expect(stopped.code).toBe(0);
    await new Promise((r) => setTimeout(r, 200));
    expect(processes.filter(isAlive).map(describeProcess)).toEqual([]);
    expect(existsSync(path.join(dir, ".platform/dev.json"))).toBe(false);

    // Second run: same database, nothing migrated again, same project.
    const again = await startDev([dir, "--port", "8877"]);
    expect(again.output()).not.toMatch(/Applied D1 migrations/);
    expect(await (await fetch(again.url + "/")).text()).toContain("Changed: hello-app");
    const session = JSON.parse(readFileSync(path.join(dir, ".platform/dev.json"), "utf8"));
    const project = await fetch(`${session.apiUrl}/projects/${session.slug}`, {
      headers: { authorization: `Bearer ${session.cliToken}` },
    });
    expect(project.status).toBe(200);
    expect(await project.json()).toMatchObject({ project: { slug: "hello-app", scriptName: "proj-hello-app" } });
    expect((await again.stop("SIGINT")).code).toBe(0);
  });
});

describe("platform push --dry-run", () => {
  it("builds a project, writes its metadata, and the bundle contains no Node SQLite code", async () => {
    const dir = path.join(work, "buildable");
    await runCli(["init", dir]);
    // The scaffold's entry has a workflow and a bot: this project is a plain router.
    writeFileSync(
      path.join(dir, "src/index.ts"),
      `import { Router } from "itty-router";
const router = Router();
router.get("/", () => new Response("ok"));
export default router;
`,
    );
    const result = await runCli(["push", dir, "--dry-run"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Built .*worker\.js \(\d+ bytes\)/);
    expect(result.stdout).toContain("Dry run: nothing deployed.");
    const bundle = readFileSync(path.join(dir, ".platform/build/worker.js"), "utf8");
    expect(bundle).not.toMatch(/node:sqlite|DatabaseSync/);
    // A project that never touches `workflow` carries none of the engine.
    expect(bundle).not.toMatch(/_workflow_events|class WorkflowRun|executeRun/);
    const metadata = JSON.parse(readFileSync(path.join(dir, ".platform/build/metadata.json"), "utf8"));
    expect(metadata).toMatchObject({
      entry: "src/index.ts",
      crons: [],
      capabilities: { workflow: false },
      durableObjects: [],
    });
  });

  it("records a workflow project's workflows, its recovery cron and its actors", async () => {
    const dir = path.join(work, "with-workflow");
    await runCli(["init", dir]);
    writeFileSync(
      path.join(dir, "src/index.ts"),
      `import { workflow } from "platform";
workflow("greet", { start: async (ctx) => ({ done: true, result: ctx.data }) }, { maxAttempts: 5 });
export default { fetch: () => new Response("ok") };
`,
    );
    const result = await runCli(["push", dir, "--dry-run"]);
    expect(result.code, result.stderr).toBe(0);
    const bundle = readFileSync(path.join(dir, ".platform/build/worker.js"), "utf8");
    expect(bundle).toContain("_workflow_events");
    const metadata = JSON.parse(readFileSync(path.join(dir, ".platform/build/metadata.json"), "utf8"));
    expect(metadata).toMatchObject({
      capabilities: { workflow: true },
      durableObjects: ["WorkflowRun", "WorkflowRunIndex", "WorkflowFlowKey"],
      crons: [{ name: "__workflow-recovery", schedule: "* * * * *" }],
      workflows: [{ name: "greet", steps: ["start"], maxAttempts: 5 }],
    });
  });

  it.each([
    [
      "platform/node",
      `import { createNodeWorkflowBackend } from "platform/node";\nexport default { fetch: () => new Response(String(createNodeWorkflowBackend)) };`,
    ],
    [
      "node:sqlite",
      `import { DatabaseSync } from "node:sqlite";\nexport default { fetch: () => new Response(String(DatabaseSync)) };`,
    ],
    [
      "a file that imports node:sqlite",
      `import { open } from "./db.ts";\nexport default { fetch: () => new Response(String(open)) };`,
    ],
  ])("fails with the native-SQLite message when worker code imports %s", async (_name, source) => {
    const dir = mkdtempSync(path.join(work, "sqlite-"));
    await runCli(["init", path.join(dir, "p")]);
    writeFileSync(path.join(dir, "p/src/index.ts"), source);
    writeFileSync(
      path.join(dir, "p/src/db.ts"),
      `import { DatabaseSync } from "node:sqlite";\nexport const open = () => new DatabaseSync(":memory:");\n`,
    );
    const result = await runCli(["push", path.join(dir, "p"), "--dry-run"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("native SQLite addon must not be imported in worker builds");
    expect(result.stderr).toContain("subpath imports");
    // The message is one line; the code frame under it points at the import (issue 15: build errors with a code frame).
    const [message, ...frame] = result.stderr.trim().split("\n");
    expect(message).toContain("native SQLite addon must not be imported in worker builds");
    expect(frame.join("\n")).toMatch(/src\/(index|db)\.ts:1:\d+/);
    expect(NATIVE_SQLITE_MESSAGE).toContain("Use subpath imports");
  });

  it("fails clearly when the project has no entry", async () => {
    const dir = mkdtempSync(path.join(work, "empty-"));
    const result = await runCli(["push", dir, "--dry-run"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No project entry/);
  });
});
