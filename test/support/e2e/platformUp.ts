import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { expect } from "vitest";
import { launchChromium } from "./browser.ts";
import { PLATFORM_BIN, REPO, waitForOutput } from "./cliProcess.ts";
import { removeWorkDir } from "./workDir.ts";

export interface StreamingCli {
  child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMS?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code once the process ended. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `platform <args>` in `cwd` and reads its output as it comes (for `platform up` and `platform login`). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv = {}, cwd = REPO): StreamingCli {
  const child = spawn(process.execPath, [PLATFORM_BIN, ...args], {
    cwd,
    env: { ...process.env, ...env, NO_COLOR: "1" },
  });
  let output = "";
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exited,
    waitFor: (pattern, timeoutMS = 90_000) => waitForOutput(child, () => output, pattern, timeoutMS),
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/**
 * GET `url` on loopback with its own Host header: `http://<slug>.localhost:N/`
 * without relying on the resolver to know `*.localhost`.
 */
export function getOnLoopback(url: string): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: "127.0.0.1", port: target.port, path: target.pathname + target.search, headers: { host: target.host } },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/** Polls `url` until its body matches `pattern` (a new deployment is served a moment after the push answers). */
export async function waitForBody(url: string, pattern: RegExp, timeoutMS = 30_000): Promise<string> {
  const started = Date.now();
  let last = "";
  while (Date.now() - started < timeoutMS) {
    try {
      const { body } = await getOnLoopback(url);
      if (pattern.test(body)) return body;
      last = body;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} never answered ${pattern}; last: ${last.slice(0, 300)}`);
}

/**
 * `platform login --api <api> --no-open` signed in as `email` through the
 * local identity provider's form and both consent pages in Chromium; resolves
 * with the CLI token `platform login` stored under `env.XDG_CONFIG_HOME`.
 */
export async function loginToUp(browser: Browser, api: string, env: NodeJS.ProcessEnv, email: string): Promise<string> {
  const login = spawnCli(["login", "--api", api, "--no-open"], env);
  const [, link] = await login.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/cli\?code=[0-9a-f]{64})/);
  const page = await browser.newPage();
  try {
    await page.goto(link!);
    await page.getByLabel("Email").fill(email);
    await page.getByLabel("Password").fill("password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.getByText(`to act as ${email}`).waitFor();
    await page.getByRole("button", { name: "Allow" }).click();
    await page.getByText("return to your terminal").waitFor();
  } finally {
    await page.close();
  }
  if ((await login.exited) !== 0) throw new Error(`platform login failed:\n${login.output()}`);
  const file = path.join(env.XDG_CONFIG_HOME!, "platform", "credentials.json");
  const stored = JSON.parse(readFileSync(file, "utf8")) as { logins: Record<string, { token: string }> };
  return stored.logins[api]!.token;
}

/** `platform up` over a work dir of its own, and a Chromium to sign in with. */
export interface UpPlatform {
  /** The work dir (`<prefix>…`): the CLI's config (`config/`) and the platform's state (`state/`) live in it. */
  tmp: string;
  /** The CLI's environment: only what `platform login` stores there, no token from the environment. */
  env: NodeJS.ProcessEnv;
  up: StreamingCli;
  browser: Browser;
}

/** Starts `platform up` on `port` over a new work dir (with `upArgs` besides), then Chromium; on a failure, stops what it started. */
export async function startPlatformUp(port: number, prefix: string, upArgs: string[] = []): Promise<UpPlatform> {
  const tmp = mkdtempSync(path.join(tmpdir(), prefix));
  const env = { XDG_CONFIG_HOME: path.join(tmp, "config"), PLATFORM_TOKEN: "", PLATFORM_API_URL: "", BROWSER: "none" };
  const up = spawnCli(["up", "--port", String(port), "--state", path.join(tmp, "state"), ...upArgs], env);
  try {
    await up.waitFor(new RegExp(`Platform on http://127\\.0\\.0\\.1:${port}`));
    return { tmp, env, up, browser: await launchChromium() };
  } catch (error) {
    await up.stop("SIGTERM");
    removeWorkDir(tmp);
    throw error;
  }
}

/** Closes Chromium and stops `platform up`, which must exit 0, then removes the work dir. */
export async function stopPlatformUp({ tmp, up, browser }: Partial<UpPlatform>): Promise<void> {
  await browser?.close();
  const code = await up?.stop("SIGTERM");
  expect(code, up?.output()).toBe(0);
  if (tmp) removeWorkDir(tmp);
}

/** An HTTP exchange on loopback with the URL's own Host header (as {@link getOnLoopback}), any method and headers. */
export function requestOnLoopback(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const target = new URL(url);
  const body = options.body ?? "";
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: options.method ?? "GET",
        path: target.pathname + target.search,
        headers: { ...options.headers, host: target.host, "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** `platform secret put <name> --dir <dir>` with the value on standard input, as a user types it. */
export function putSecretOnUp(
  env: NodeJS.ProcessEnv,
  dir: string,
  name: string,
  value: string,
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
