import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  describeProcess,
  descendantsOf,
  isAlive,
  plainShellPath,
  REPO,
  waitForOutput,
} from "#test/support/e2e/index.ts";
import {
  exportsWithoutExample,
  removeWorkDir,
  startServing,
  systemNode,
  type DevProcess,
} from "#test/support/e2e/index.ts";

// Port of this file: 8960. The platform package tried as a new user would: packed by `npm run package`,
// installed from its tarball into a folder outside the repository, with the machine's own Node (20 here)
// first on PATH and nothing of this repository's environment. A minute and more of npm's own work (the
// package built, then installed twice), so it is in `npm run test:long`, which CI runs; what the package holds
// is checked in `npm test` too (test/dev/package/packageManifest.test.ts).
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-package-"));
const artifacts = path.join(work, "artifacts");
const project = path.join(work, "my-app");
let tarball = "";
let dev: DevProcess | null = null;
/** `platform logs --follow` while a test reads it. */
let follow: ChildProcess | null = null;
/** What the two installs printed: `npm install <tgz>`, then `npm install` of the scaffolded project. */
const installOutputs: string[] = [];

/** A plain shell's environment: no npm_*, VITEST* or NODE_* variables of the test run, and no node_modules/.bin. */
function userEnv(): NodeJS.ProcessEnv {
  const kept = ["HOME", "USER", "LANG", "TMPDIR", "CI"].filter((name) => process.env[name] !== undefined);
  return {
    ...Object.fromEntries(kept.map((name) => [name, process.env[name]])),
    PATH: plainShellPath(),
    NO_COLOR: "1",
    npm_config_update_notifier: "false",
  };
}

interface Ran {
  code: number | null;
  output: string;
  ms: number;
}

/** Runs a command to completion as the user would type it; its output (stdout and stderr) is for failure messages. */
function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = userEnv()): Promise<Ran> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, output, ms: Date.now() - started }));
  });
}

async function ok(command: string, args: string[], cwd: string): Promise<Ran> {
  const ran = await sh(command, args, cwd);
  expect(ran.code, `${command} ${args.join(" ")} in ${cwd}:\n${ran.output}`).toBe(0);
  console.log(`${command} ${args.join(" ")}: ${(ran.ms / 1000).toFixed(1)} s`);
  return ran;
}

const INSTALL_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund"];

// The test the user writes next: a workflow whose step emails, read back from the test kit's outbox.
const WELCOME_WORKFLOW = `import { email, workflow } from "platform";

export interface Signup {
  email: string;
  name: string;
}

export const welcome = workflow<Signup, { emailId: string }, { emailId: string }>("welcome", {
  start: async (ctx) => {
    const { id } = await email.send({ to: ctx.data.email, subject: \`Welcome, \${ctx.data.name}\`, html: "<p>Hello!</p>" });
    ctx.write("emailId", id);
    return { step: "finish", sleepMS: 86_400_000 };
  },
  finish: async (ctx) => ({ done: true, result: { emailId: ctx.scratchpad.emailId! } }),
});
`;

const WELCOME_TEST = `import { expect, it } from "vitest";
import { testWorkflow } from "platform/testing";
import { welcome } from "../src/welcome.ts";

it("emails the new user, then finishes a day later on the virtual clock", async () => {
  const start = Date.UTC(2026, 0, 1);
  const run = await testWorkflow(welcome, { email: "ada@example.com", name: "Ada" }, { startAt: start });
  const { emailId } = await run.result();
  expect(emailId).toMatch(/^test-email-/);
  expect(run.outbox).toEqual([{ to: ["ada@example.com"], subject: "Welcome, Ada", html: "<p>Hello!</p>" }]);
  expect(run.now()).toBe(start + 86_400_000);
});
`;

beforeAll(async () => {
  expect(systemNode(), "a system node on PATH").not.toBeNull();
  const packaged = await ok("npm", ["run", "package", "--", "--out", artifacts], REPO);
  tarball = packaged.output.trim().split("\n").at(-1)!;
  expect(tarball).toBe(path.join(artifacts, "platform-0.1.0.tgz"));
  expect(existsSync(tarball)).toBe(true);

  mkdirSync(project);
  installOutputs.push((await ok("npm", ["install", tarball, ...INSTALL_FLAGS], project)).output);
  const init = await ok("npx", ["platform", "init", "."], project);
  expect(init.output).toContain(`Created project "my-app" in ${project}`);
  expect(init.output).toContain("Next: npm install && npm test && npm run dev");
  installOutputs.push((await ok("npm", ["install", ...INSTALL_FLAGS], project)).output);
}, 600_000);

afterAll(async () => {
  // A test that failed while it read `--follow` leaves it running: end the row from its CLI up.
  for (const pid of follow ? [follow.pid!, ...descendantsOf(follow.pid!)].reverse() : []) {
    if (isAlive(pid)) process.kill(pid, "SIGTERM");
  }
  // The same for a failed test's `platform dev`: npm and npx stand between, so signal the whole row.
  for (const pid of dev ? [dev.child.pid!, ...descendantsOf(dev.child.pid!)].reverse() : []) {
    if (isAlive(pid)) process.kill(pid, "SIGTERM");
  }
  await dev?.stop("SIGTERM");
  removeWorkDir(work);
});

describe("the platform package in a fresh folder: npm install <tgz>, npx platform init ., npm install", () => {
  it("scaffolds a project that depends on the installed tarball and refers to nothing of the repository", () => {
    const manifest = JSON.parse(readFileSync(path.join(project, "package.json"), "utf8"));
    expect(manifest.scripts).toEqual({
      dev: "platform dev .",
      test: "vitest run",
      typecheck: "tsc",
      push: "platform push .",
    });
    expect(path.resolve(project, manifest.dependencies.platform.replace(/^file:/, ""))).toBe(tarball);
    expect(Object.keys(manifest.devDependencies).sort()).toEqual(["@cloudflare/workers-types", "typescript", "vitest"]);
    for (const file of ["package.json", "tsconfig.json", "vitest.config.ts", "src/index.ts", "test/index.test.ts"]) {
      expect(readFileSync(path.join(project, file), "utf8"), file).not.toContain(REPO);
    }
    // The CLI the scripts call is the installed package's, run by the Node 22 it brought.
    expect(existsSync(path.join(project, "node_modules/platform/dist/dev/cli/main.js"))).toBe(true);
    expect(existsSync(path.join(project, "node_modules/.bin/node"))).toBe(true);
  });

  // npm checks each package's engines against the Node it runs on (20 here). These need Node 22 and run only
  // under the Node 22 the package brings: the CLI's Miniflare and wrangler (with wrangler's kv-asset-handler),
  // and the project's vitest. Every published miniflare and wrangler needs Node 22, so npm warns for them.
  it("npm install warns EBADENGINE for nothing but the Node 22 tools the package runs under its own Node 22", () => {
    const nodeTwentyTwoTools = ["@cloudflare/kv-asset-handler", "miniflare", "vitest", "wrangler"];
    const warned = Array.from(installOutputs.join("\n").matchAll(/EBADENGINE\s+package: '(@?[^@']+)@/g), (m) => m[1]!);
    expect([...new Set(warned)].filter((name) => !nodeTwentyTwoTools.includes(name))).toEqual([]);
  });

  it("`npx platform init <dir>` from the project: the new folder depends on the same tarball, from where it is", async () => {
    const other = path.join(work, "nested", "second-app");
    const init = await ok("npx", ["platform", "init", "../nested/second-app"], project);
    expect(init.output).toContain("Next: cd ../nested/second-app && npm install && npm test && npm run dev");
    const manifest = JSON.parse(readFileSync(path.join(other, "package.json"), "utf8"));
    expect(manifest.name).toBe("second-app");
    expect(path.resolve(other, manifest.dependencies.platform.replace(/^file:/, ""))).toBe(tarball);
  });

  it("every public export of platform, platform/testing and platform/node shows an @example in the editor", () => {
    const dist = path.join(project, "node_modules/platform/dist/runtime");
    for (const entry of ["index.d.ts", "testing/index.d.ts", "node/index.d.ts"])
      expect(exportsWithoutExample(path.join(dist, entry)), entry).toEqual([]);
  });

  it("npm run typecheck exits 0, with the user's own workflow typed", async () => {
    writeFileSync(path.join(project, "src/welcome.ts"), WELCOME_WORKFLOW);
    await ok("npm", ["run", "typecheck"], project);
  });

  it("npm test passes the scaffold's tests (request, workflow failure and key, bot command and click) and a workflow test reading the email from run.outbox", async () => {
    writeFileSync(path.join(project, "test/welcome.test.ts"), WELCOME_TEST);
    const tested = await ok("npm", ["test", "--", "--reporter=verbose"], project);
    expect(tested.output).toMatch(/Test Files\s+2 passed \(2\)/);
    expect(tested.output).toMatch(/Tests\s+7 passed \(7\)/);
    for (const name of [
      "fails on a name that is not letters; the cause is the step's error, with its line in src/index.ts",
      "two starts with one idempotencyKey answer one run",
      "/hello replies with a button; a click on it updates the message",
    ]) {
      const passed = tested.output.split("\n").some((line) => line.includes("✓") && line.includes(name));
      expect(passed, `${name} passed in:\n${tested.output}`).toBe(true);
    }
  });

  it("npm run dev -- --port 8960 prints Ready and the page answers; it stops by its PID", async () => {
    dev = await startServing("npm", ["run", "dev", "--", "--port", "8960"], { cwd: project, env: userEnv() });
    expect(dev.url).toBe("http://127.0.0.1:8960");
    const page = await fetch(dev.url + "/");
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Hello from my-app");
    expect(await (await fetch(dev.url + "/api/hello/Ada")).json()).toEqual({ hello: "Ada" });

    // npm, its shell and the Node 20 wrapper stand between: stop platform dev itself, by the PID it recorded.
    const session = JSON.parse(readFileSync(path.join(project, ".platform/dev.json"), "utf8")) as { pid: number };
    const tree = [dev.child.pid!, ...descendantsOf(dev.child.pid!)];
    expect(tree).toContain(session.pid);
    process.kill(session.pid, "SIGTERM");
    // The wrapper relays platform dev's exit code, and npm its: a clean stop ends `npm run dev` with 0.
    const exited = await new Promise<number | null>((resolve) => dev!.child.once("exit", resolve));
    dev = null;
    expect(exited).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(tree.filter(isAlive).map(describeProcess)).toEqual([]);
  });

  it("`npx platform dev --port 8961` with no directory runs this folder's project, reads .dev.vars, and `platform logs` (--follow too) here shows its requests, console.log lines and a failed step's src/index.ts line", async () => {
    writeFileSync(path.join(project, ".dev.vars"), "GREETING=Howdy\n");
    const source = readFileSync(path.join(project, "src/index.ts"), "utf8").replace(
      "export default router;",
      `router.get("/api/greeting", (_request, env) => {
  console.log(\`greeting with \${env.GREETING}\`);
  return Response.json({ greeting: env.GREETING });
});
router.get("/api/greet/:name", async ({ params }) => Response.json(await workflow.start(greet, { name: params.name! })));
router.get("/api/boom", () => {
  throw new Error("boom from my-app");
});
export default { fetch: (request: Request, env: Record<string, string>) => router.fetch(request, env) };`,
    );
    writeFileSync(path.join(project, "src/index.ts"), source);
    // The scaffold's greet step throws on a name that is not letters: its stack must name this line.
    const throwLine = source.split("\n").findIndex((line) => line.includes("throw new NonRetryableError")) + 1;
    expect(throwLine).toBeGreaterThan(0);
    const stepFrame = new RegExp(`at start \\(src/index\\.ts:${throwLine}:\\d+\\)`);
    const boomLine = source.split("\n").findIndex((line) => line.includes('throw new Error("boom from my-app")')) + 1;

    dev = await startServing("npx", ["platform", "dev", "--port", "8961"], { cwd: project, env: userEnv() });
    expect(dev.output()).toContain(`Project "my-app" from ${project}`);
    expect(await (await fetch(`${dev.url}/api/hello/Ada`)).json()).toEqual({ hello: "Ada" });
    expect(await (await fetch(`${dev.url}/api/greeting`)).json()).toEqual({ greeting: "Howdy" });
    const logs = await ok("npx", ["platform", "logs"], project);
    expect(logs.output).toMatch(/GET \/api\/greeting/);
    expect(logs.output).toContain("greeting with Howdy");

    // --follow prints the log so far, then each new line: a second greeting and a failed run arrive while it reads.
    const reading = spawn("npx", ["platform", "logs", "--follow"], { cwd: project, env: userEnv() });
    follow = reading;
    let followed = "";
    reading.stdout.on("data", (d) => (followed += d));
    reading.stderr.on("data", (d) => (followed += d));
    await waitForOutput(reading, () => followed, /greeting with Howdy/, 60_000);
    const before = followed.length;
    expect((await fetch(`${dev.url}/api/greeting?again=1`)).status).toBe(200);
    expect((await fetch(`${dev.url}/api/greet/R2D2`)).status).toBe(200);
    const newLines = () => followed.slice(before);
    for (const line of [
      /GET \/api\/greeting\?again=1/,
      /greeting with Howdy/,
      /start#1 failed in \d+ ms: (NonRetryableError: )?Cannot greet "R2D2": not a name\./,
      stepFrame,
    ])
      await waitForOutput(reading, newLines, line, 60_000);
    // It ends by its PID: npx and its shell stand between; the CLI is the process at the end of the row.
    const followTree = [reading.pid!, ...descendantsOf(reading.pid!)];
    const cli = followTree.filter((pid) => descendantsOf(pid).length === 0);
    expect(cli, followTree.map(describeProcess).join("\n")).toHaveLength(1);
    const followExited = new Promise((resolve) => reading.once("exit", resolve));
    process.kill(cli[0]!, "SIGTERM");
    await followExited;
    follow = null;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(followTree.filter(isAlive).map(describeProcess)).toEqual([]);

    // platform dev's own terminal: the step's line in the user's source, the platform's frames as one line.
    await dev.waitFor(stepFrame);
    const failure = dev.output().slice(dev.output().search(/start#1 failed/));
    expect(failure).toMatch(new RegExp(`${stepFrame.source}\\n\\s+… \\d+ platform frames?`));
    expect(failure.split("\n").slice(0, 4).join("\n")).not.toContain("node_modules/platform/");
    // A route's uncaught error, as workerd logged it: the same rule.
    expect((await fetch(`${dev.url}/api/boom`)).status).toBe(500);
    await dev.waitFor(/Unhandled error in project worker: Error: boom from my-app/);
    const boom = dev
      .output()
      .slice(dev.output().search(/Unhandled error in project worker: Error: boom/))
      .split("\n");
    const stackEnd = boom.findIndex((line, i) => i > 0 && !/^\s/.test(line));
    const boomStack = boom.slice(0, stackEnd === -1 ? undefined : stackEnd).join("\n");
    expect(boomStack).toMatch(/\n\s+… \d+ platform frames?(\n|$)/);
    expect(boomStack).toMatch(new RegExp(`at [^\\n]*src/index\\.ts:${boomLine}:\\d+`));
    expect(boomStack).not.toContain("node_modules/platform/");

    const session = JSON.parse(readFileSync(path.join(project, ".platform/dev.json"), "utf8")) as { pid: number };
    process.kill(session.pid, "SIGTERM");
    expect(await new Promise<number | null>((resolve) => dev!.child.once("exit", resolve))).toBe(0);
    dev = null;
  }, 300_000);
});
