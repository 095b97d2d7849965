import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  initProject,
  launchChromium,
  loginToUp,
  PLATFORM_BIN,
  REPO,
  runCli,
  spawnCli,
  type StreamingCli,
  removeWorkDir,
  waitForBody,
} from "#test/support/e2e/index.ts";

// Issue 29 item 4 and issue 30 item 7: `platform up` started in a project folder (where `npx platform` is)
// keeps its state in the user's state folder, writes nothing in the project, and no secret value in plain text.
// Ports of this file: 8988.
const PORT = 8988;
const API = `http://127.0.0.1:${PORT}`;
const SECRET = "sk_live_sealed_e2e_9c41d7";
const SHOP_URL = `http://shop.localhost:${PORT}/`;

// The value is never in the project's source (which platform up keeps): the page answers what it reads.
const SHOP = `export default {
  fetch: (_request, env) => new Response("key: " + (env.PAYMENT_KEY ?? "none")),
};
`;

let tmp: string;
let dir: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli | undefined;
let browser: Browser | undefined;

/** Every path under `root` but node_modules, relative. */
const listing = (root: string) =>
  readdirSync(root, { recursive: true })
    .map(String)
    .filter((entry) => !entry.startsWith("node_modules"))
    .sort();

/** The files under `root` whose bytes contain `value` (what `grep -r value root` lists). */
const filesHolding = (root: string, value: string) =>
  readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => readFileSync(file).includes(value));

/** `platform up` with no --state, started in the project folder, as a user runs `npx platform up` there. */
async function startUpInProject(): Promise<StreamingCli> {
  const started = spawnCli(["up", "--port", String(PORT)], env, dir);
  await started.waitFor(new RegExp(`Platform on ${API.replace(/\./g, "\\.")}`));
  return started;
}

async function stopUp(): Promise<void> {
  const code = await up?.stop("SIGTERM");
  expect(code, up?.output()).toBe(0);
  up = undefined;
}

function putSecret(name: string, value: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PLATFORM_BIN, "secret", "put", name, "--dir", dir], {
      cwd: REPO,
      env: { ...process.env, ...env, NO_COLOR: "1" },
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stderr }));
    child.stdin.end(`${value}\n`);
  });
}

let before: string[];
let token: string;

beforeAll(async () => {
  tmp = mkdtempSync(path.join(tmpdir(), "platform-e2e-upstate-"));
  env = {
    XDG_CONFIG_HOME: path.join(tmp, "config"),
    XDG_STATE_HOME: path.join(tmp, "state"),
    PLATFORM_TOKEN: "",
    PLATFORM_API_URL: "",
    BROWSER: "none",
  };
  dir = path.join(tmp, "shop");
  await initProject(dir, SHOP);
  before = listing(dir);
  up = await startUpInProject();
  browser = await launchChromium();
  token = await loginToUp(browser, API, env, "ada@example.com");
}, 360_000);

afterAll(async () => {
  await browser?.close();
  await up?.stop("SIGTERM");
  removeWorkDir(tmp);
});

it("keeps its state in $XDG_STATE_HOME/platform/up and writes nothing in the folder it was started in", () => {
  const stateDir = path.join(tmp, "state", "platform", "up");
  expect(up!.output()).toContain(`State in ${stateDir}`);
  expect(existsSync(path.join(stateDir, "credentials.json"))).toBe(true);
  expect(listing(dir)).toEqual(before);
});

it("platform console --api opens that platform's console signed in with the stored login", async () => {
  const link = await runCli(["console", "--api", API, "--print-token"], { env });
  expect(link.code, link.stderr).toBe(0);
  expect(link.stdout.trim()).toBe(`${API}/console/#token=${token}`);
});

it("keeps a pushed secret sealed: no file of its state holds the value, and the project reads it after a restart", async () => {
  const push = async () => {
    const pushed = await runCli(["push", dir], { env, timeoutMS: 120_000 });
    expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  };
  await push();
  const put = await putSecret("PAYMENT_KEY", SECRET);
  expect(put.code, put.stderr).toBe(0);
  await push();
  await waitForBody(SHOP_URL, new RegExp(`key: ${SECRET}`));
  expect(filesHolding(path.join(tmp, "state"), SECRET)).toEqual([]);

  await stopUp();
  up = await startUpInProject();
  expect(up.output()).not.toContain("Skipped the saved script");
  await waitForBody(SHOP_URL, new RegExp(`key: ${SECRET}`));
  expect(filesHolding(path.join(tmp, "state"), SECRET)).toEqual([]);
  // What the push wrote (its build, under .platform/, which the scaffold's .gitignore lists), and nothing of up's.
  expect(listing(dir).filter((entry) => !entry.startsWith(".platform"))).toEqual(before);
}, 600_000);

it("its console requests only routes platform up has: no outbox (platform dev's only)", async () => {
  const page = await browser!.newPage();
  const requested: string[] = [];
  const missing: string[] = [];
  page.on("request", (request) => requested.push(request.url()));
  page.on("response", (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
  try {
    await page.goto(`${API}/console/#token=${token}`);
    await page.getByRole("link", { name: "shop" }).click();
    await page.locator("#logs-heading").waitFor();
    expect(await page.locator("#outbox").count()).toBe(0);
  } finally {
    await page.close();
  }
  expect(requested.filter((url) => /\/projects\/[^/]+\/outbox/.test(url))).toEqual([]);
  // Neither the outbox nor an icon answers 404 (the console declares its own favicon.svg).
  expect(missing.filter((url) => /outbox|favicon/.test(url))).toEqual([]);
}, 120_000);
