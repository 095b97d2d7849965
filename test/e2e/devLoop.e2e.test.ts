import { renameSync, writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  devSession,
  initProject,
  launchChromium,
  removeWorkDir,
  runCli,
  signedInConsoleUrl,
  spawnCli,
  startDev,
  type DevProcess,
  type StreamingCli,
} from "../support/e2e/index.ts";

// The dev loop of one project under `platform dev`: its variables (.dev.vars), its log
// (`platform logs --follow` and the console's Logs view), a load-time throw that leaves the
// previous version answering, and rename-style saves. Ports of this file: 8921.
const PORT = 8921;

const source = (version: string, extra = "") => `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("explode", {
  start: async (ctx) => {
    console.log("step reads", ctx.env.GREETING);
    throw new Error("kaboom in a step");
  },
}, { maxAttempts: 1 });

workflow("approve", {
  start: async () => ({ step: "nap", sleepMS: 1 }),
  nap: async () => ({ step: "done", waitFor: "approval", timeoutMS: 3_600_000 }),
  done: async (ctx) => ({ done: true, result: ctx.event }),
});
${extra}
const router = Router();
router.get("/", (_request, env) => new Response("${version} " + env.GREETING));
router.get("/hello", () => {
  console.log("hello from the route");
  return new Response("hi");
});
router.post("/start/:name", async ({ params }) => Response.json({ id: (await workflow.start(params.name, {})).id }));
export default router;
`;

/** Saves as `sed -i`, vim's backupcopy and JetBrains' safe write do: a new file renamed over the old one. */
function saveByRename(file: string, text: string) {
  const temporary = path.join(path.dirname(file), `.${path.basename(file)}.swp`);
  writeFileSync(temporary, text);
  renameSync(temporary, file);
}

let work: string;
let dir: string;
let dev: DevProcess;
let logs: StreamingCli;
let browser: Browser | undefined;

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), "platform-dev-loop-"));
  dir = path.join(work, "loop");
  await initProject(dir, source("v1"));
  writeFileSync(path.join(dir, ".dev.vars"), 'GREETING="hello from .dev.vars"\n');
  // The follower starts first, so this file cannot depend on when `platform dev` is up: it waits for it
  // (no platform named: no login of this machine's is read).
  logs = spawnCli(["logs", "--dir", dir, "--follow"], {
    XDG_CONFIG_HOME: path.join(work, "config"),
    PLATFORM_API_URL: "",
    PLATFORM_TOKEN: "",
  });
  await logs.waitFor(/No `platform dev` is running for .*; waiting for it, trying again/);
  dev = await startDev([dir, "--port", String(PORT)]);
});

afterAll(async () => {
  await browser?.close();
  await logs?.stop("SIGINT");
  if (dev) expect((await dev.stop()).code).toBe(0);
  removeWorkDir(work);
});

const get = async (pathname: string) => (await fetch(`${dev.url}${pathname}`)).text();

describe("a project's variables under platform dev", () => {
  it("reads .dev.vars as env.NAME in fetch and ctx.env.NAME in a step; the scaffold keeps it out of git", async () => {
    expect(await get("/")).toBe("v1 hello from .dev.vars");
    await fetch(`${dev.url}/start/explode`, { method: "POST" });
    await dev.waitFor(/step reads hello from \.dev\.vars/);
    expect(await (await import("node:fs/promises")).readFile(path.join(dir, ".gitignore"), "utf8")).toMatch(
      /^\.dev\.vars$/m,
    );
  });

  it("refuses a .dev.vars name the platform keeps, and keeps serving the previous version", async () => {
    writeFileSync(path.join(dir, ".dev.vars"), "PLATFORM_PROJECT_ID=7\n");
    await dev.waitFor(
      /Build failed, still serving the previous version: \.dev\.vars: PLATFORM_PROJECT_ID: names starting with PLATFORM_/,
    );
    expect(await get("/")).toBe("v1 hello from .dev.vars");
    writeFileSync(path.join(dir, ".dev.vars"), "GREETING=again\n");
    await expect.poll(() => get("/"), { timeout: 30_000 }).toBe("v1 again");
  });
});

describe("platform logs --follow under platform dev", () => {
  it("shows a request line, a console.log line and the step lines, and says when a run sleeps and waits", async () => {
    await get("/hello");
    await fetch(`${dev.url}/start/approve`, { method: "POST" });
    await logs.waitFor(/\d\d:\d\d:\d\d GET \/hello → 200 in \d+ ms/);
    await logs.waitFor(/\d\d:\d\d:\d\d hello from the route/);
    await logs.waitFor(/run [0-9a-f]{8}: start#1 failed in \d+ ms: kaboom in a step/);
    await logs.waitFor(/run [0-9a-f]{8}: start#1 completed in \d+ ms → nap, sleeps 1 ms/);
    await logs.waitFor(/run [0-9a-f]{8}: nap#1 completed in \d+ ms → done, waits for "approval" \(at most 1 h\)/);
    // platform dev's own terminal says the same, as the steps happen.
    await dev.waitFor(/nap#1 completed in \d+ ms → done, waits for "approval"/);
  });

  it("points a failed step's stack at src/index.ts", async () => {
    await logs.waitFor(/start#1 failed in \d+ ms: kaboom in a step\n.*at .*src\/index\.ts:7:11/);
    const get = await runCli(["workflow", "list", "--name", "explode", "--full", "--dir", dir]);
    const runId = /([0-9a-f]{64}\.\w+)/.exec(get.stdout)?.[1];
    const shown = await runCli(["workflow", "get", runId!, "--dir", dir]);
    expect(shown.stdout).toMatch(
      /Failed attempts:\n {2}start#1\n {4}Error: kaboom in a step\n {8}at .*src\/index\.ts:7:11/,
    );
  });

  it("the console's Logs view shows the same lines", async () => {
    browser = await launchChromium();
    const page = await browser.newPage();
    await page.goto(signedInConsoleUrl(dir));
    const lines = page.locator("#log-lines");
    await expect.poll(() => lines.textContent(), { timeout: 20_000 }).toMatch(/GET \/hello → 200 in \d+ ms/);
    expect(await lines.textContent()).toContain("hello from the route");
    await get("/hello?again=1");
    await expect.poll(() => lines.textContent(), { timeout: 20_000 }).toMatch(/GET \/hello\?again=1 → 200/);
    await page.close();
  });
});

describe("a dev loop that never goes dark", () => {
  it("a throw while loading leaves the previous version, the console and the API answering", async () => {
    const index = path.join(dir, "src/index.ts");
    writeFileSync(
      index,
      source("v2", 'workflow("bad", { start: async () => ({ done: true }) }, { maxAttempts: -4 });\n'),
    );
    await dev.waitFor(
      /Build failed, still serving the previous version: The project threw while its module was loading[\s\S]*src\/index\.ts:\d+/,
    );
    expect(await get("/")).toBe("v1 again");
    const { apiUrl } = devSession(dir);
    expect((await fetch(`${apiUrl}/health`)).status).toBe(200);
    expect((await fetch(`${apiUrl}/console/`)).status).toBe(200);
    expect(dev.output()).not.toMatch(/ECONNREFUSED/);
  });

  it("rebuilds on each of three rename-style saves in a row", async () => {
    const index = path.join(dir, "src/index.ts");
    for (const version of ["r1", "r2", "r3"]) {
      const rebuilt = (dev.output().match(/Rebuilt in \d+ ms/g) ?? []).length;
      saveByRename(index, source(version));
      await expect
        .poll(() => (dev.output().match(/Rebuilt in \d+ ms/g) ?? []).length, { timeout: 30_000 })
        .toBe(rebuilt + 1);
      expect(await get("/")).toBe(`${version} again`);
    }
  });
});
