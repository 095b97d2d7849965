import path from "node:path";
import { spawn } from "node:child_process";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  getOnLoopback,
  initProject,
  loginToUp,
  PLATFORM_BIN,
  REPO,
  runCli,
  spawnCli,
  type StreamingCli,
  waitForBody,
  startPlatformUp,
  stopPlatformUp,
} from "#test/support/e2e/index.ts";

// Two projects pushed to `platform up`: one reads a secret put with `platform secret put`, and
// `platform logs --follow` shows its requests, console output, errors and steps, never the other's.
// Ports of this file: 8975.
const PORT = 8975;
const API = `http://127.0.0.1:${PORT}`;
const SECRET = "sk_live_e2e_only_the_project_sees_this";

const SHOP = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("charge", {
  start: async (ctx) => {
    if (ctx.env.PAYMENT_KEY !== "${SECRET}") throw new Error("no key in ctx.env");
    throw new Error("card declined in a step");
  },
}, { maxAttempts: 1 });

const router = Router();
router.get("/", (_request, env) => new Response(env.PAYMENT_KEY === "${SECRET}" ? "key present" : "no key"));
router.get("/hello", () => {
  console.log("shop says hello");
  return new Response("hi");
});
router.get("/boom", () => {
  throw new Error("route kaboom");
});
router.post("/charge", async () => Response.json({ id: (await workflow.start("charge", {})).id }));
export default router;
`;

const BLOG = `export default {
  fetch() {
    console.log("BLOG-ONLY-LINE");
    return new Response("blog");
  },
};
`;

let tmp: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli;
let browser: Browser;
let shop: string;
let blog: string;
let logs: StreamingCli | undefined;

beforeAll(async () => {
  ({ tmp, env, up, browser } = await startPlatformUp(PORT, "platform-up-logs-"));
  await loginToUp(browser, API, env, "ada@example.com");
  shop = path.join(tmp, "shop");
  blog = path.join(tmp, "blog");
  await initProject(shop, SHOP);
  await initProject(blog, BLOG);

  // platform up, a browser sign-in and pushes: minutes on a loaded 2-core machine, not a bound on speed.
}, 360_000);

afterAll(async () => {
  await logs?.stop("SIGINT");
  await stopPlatformUp({ tmp, up, browser });
});

/** `platform secret put` with the value on standard input. */
function putSecret(
  name: string,
  value: string,
  dir: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PLATFORM_BIN, "secret", "put", name, "--dir", dir], {
      cwd: REPO,
      env: { ...process.env, ...env, NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(`${value}\n`);
  });
}

const push = async (dir: string) => {
  const pushed = await runCli(["push", dir], { env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  return pushed;
};

describe("project secrets on platform up", () => {
  it("a secret put with platform secret put is read after a push, and survives a second push; list shows the name only", async () => {
    await push(shop);
    await waitForBody("http://shop.localhost:8975/", /no key/);
    const put = await putSecret("PAYMENT_KEY", SECRET, shop);
    expect(put.code, put.stderr).toBe(0);
    expect(put.stdout).toContain('Added secret PAYMENT_KEY of "shop"');
    expect(put.stdout + put.stderr).not.toContain(SECRET);
    // Until the next push the running version keeps its bindings.
    expect((await getOnLoopback("http://shop.localhost:8975/")).body).toBe("no key");
    const pushed = await push(shop);
    expect(pushed.stdout + pushed.stderr).not.toContain(SECRET);
    await waitForBody("http://shop.localhost:8975/", /key present/);
    await push(shop);
    await waitForBody("http://shop.localhost:8975/", /key present/);

    const list = await runCli(["secret", "list", "--dir", shop], { env });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^PAYMENT_KEY {2}set \d{4}-\d\d-\d\dT/m);
    expect(list.stdout).not.toContain(SECRET);
    expect(up.output()).not.toContain(SECRET);
  });

  it("refuses a PLATFORM_ name with a clear error", async () => {
    const refused = await putSecret("PLATFORM_X", "v", shop);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("PLATFORM_X: names starting with PLATFORM_ are the platform's own");
    const list = await runCli(["secret", "list", "--dir", shop], { env });
    expect(list.stdout).not.toContain("PLATFORM_X");
  });
});

describe("platform logs --follow for a project pushed to platform up", () => {
  it("shows a request line, a console.log line, a failed step and a route error's stack at src/index.ts, never another project's lines", async () => {
    await push(blog);
    logs = spawnCli(["logs", "--dir", shop, "--follow"], env);
    await logs.waitFor(/\d\d:\d\d:\d\d GET \/ → 200 in \d+ ms/);
    await getOnLoopback("http://shop.localhost:8975/hello");
    await getOnLoopback("http://blog.localhost:8975/");
    const boom = await getOnLoopback("http://shop.localhost:8975/boom");
    // The visitor gets a bare 500; the log line carries the stack.
    expect(boom.status).toBe(500);
    expect(boom.body).not.toContain("src/index.ts");
    expect(boom.body).not.toContain("route kaboom");
    await logs.waitFor(/GET \/hello → 200 in \d+ ms/);
    await logs.waitFor(/shop says hello/);
    await logs.waitFor(/error: Unhandled error in project worker: Error: route kaboom\n.*at .*src\/index\.ts:18:9/);
    await logs.waitFor(/GET \/boom → 500 in \d+ ms/);
    expect(logs.output()).not.toContain("BLOG-ONLY-LINE");
    // The blog's own log has its line, and none of the shop's.
    const blogLog = await runCli(["logs", "--dir", blog], { env });
    expect(blogLog.stdout).toContain("BLOG-ONLY-LINE");
    expect(blogLog.stdout).not.toContain("shop says hello");
  });

  it("shows a failed step's line with src/index.ts:LINE", async () => {
    const started = await runCli(["workflow", "start", "charge", "--dir", shop, "--api", API], { env });
    expect(started.code, started.stderr).toBe(0);
    await logs!.waitFor(/start#1 failed in \d+ ms: card declined in a step\n.*at .*src\/index\.ts:7:11/);
  });
});
