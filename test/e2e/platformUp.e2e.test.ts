import { readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  runCli,
  spawnCli,
  waitForBody,
  type StreamingCli,
  startPlatformUp,
  stopPlatformUp,
} from "#test/support/e2e/index.ts";

// Ports of this file: 8800.
const PORT = 8800;
const API = `http://127.0.0.1:${PORT}`;

let tmp: string;
let env: NodeJS.ProcessEnv;
let up: StreamingCli;
let browser: Browser;

beforeAll(async () => {
  ({ tmp, env, up, browser } = await startPlatformUp(PORT, "platform-up-"));
});

afterAll(async () => {
  await stopPlatformUp({ tmp, up, browser });
});

describe("platform up, login and push", () => {
  it("logs in through the browser with the local identity provider, and whoami names the account", async () => {
    const login = spawnCli(["login", "--api", API, "--no-open"], env);
    const [, link] = await login.waitFor(/(http:\/\/127\.0\.0\.1:\d+\/cli\?code=[0-9a-f]{64})/);
    const [, verification] = await login.waitFor(/shows? the code ([0-9A-F]{4}-[0-9A-F]{4})/);
    await login.waitFor(/Waiting for you to sign in/);

    const page = await browser.newPage();
    await page.goto(link!);
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Password").fill("password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();
    // The platform's own question, with the code the terminal shows.
    await page.getByText("to act as ada@example.com").waitFor();
    expect(await page.content()).toContain(verification);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.getByText("return to your terminal").waitFor();
    // The link worked once: opening it again starts nothing.
    await page.goto(link!);
    expect(await page.content()).toMatch(/already opened/);
    await page.close();

    expect(await login.exited, login.output()).toBe(0);
    expect(login.output()).toContain(`Logged in to ${API} as ada@example.com`);
    const file = path.join(tmp, "config", "platform", "credentials.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(stored.current).toBe(API);
    expect(Object.keys(stored.logins)).toEqual([API]);

    const whoami = await runCli(["whoami"], { env });
    expect(whoami.stdout.trim(), whoami.stderr).toBe("ada@example.com");
  });

  it("pushes a fresh project (created on first push), then serves the edited version after a second push", async () => {
    const dir = path.join(tmp, "hello-up");
    const init = await runCli(["init", dir], { env });
    expect(init.code, init.stderr).toBe(0);

    const first = await runCli(["push", dir], { env, timeoutMS: 120_000 });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.stdout).toContain(`Created project "hello-up" on ${API}`);
    const url = /Open (http:\/\/hello-up\.localhost:\d+\/)/.exec(first.stdout)?.[1];
    expect(url, first.stdout).toBe(`http://hello-up.localhost:${PORT}/`);
    await waitForBody(url!, /Hello from hello-up/);

    const source = path.join(dir, "src", "index.ts");
    writeFileSync(source, readFileSync(source, "utf8").replace("Hello from", "Second version of"));
    const second = await runCli(["push", dir], { env, timeoutMS: 120_000 });
    expect(second.code, second.stdout + second.stderr).toBe(0);
    expect(second.stdout).not.toContain("Created project");
    await waitForBody(url!, /Second version of hello-up/);
  });

  it("refuses a reserved slug with the API's message", async () => {
    const dir = path.join(tmp, "hello-up");
    const refused = await runCli(["push", dir, "--slug", "login"], { env, timeoutMS: 120_000 });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/"login" is reserved/);
  });

  it("logs out: the token is revoked and forgotten", async () => {
    const file = path.join(tmp, "config", "platform", "credentials.json");
    const { token } = JSON.parse(readFileSync(file, "utf8")).logins[API];
    const before = await fetch(`${API}/cli/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(before.status).toBe(200);

    const out = await runCli(["logout"], { env });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain(`Logged out of ${API}.`);
    // Revoked: the API refuses the old token, from the CLI (as a CI token) and from anywhere else.
    const after = await fetch(`${API}/cli/whoami`, { headers: { authorization: `Bearer ${token}` } });
    expect(after.status).toBe(401);
    expect(await after.json()).toMatchObject({ error: { code: "unauthorized" } });
    const asCiToken = await runCli(["whoami", "--api", API], { env: { ...env, PLATFORM_TOKEN: token } });
    expect(asCiToken.code).toBe(1);
    expect(asCiToken.stdout).toBe("");
    // Forgotten: the CLI no longer has a token for this API.
    expect(JSON.parse(readFileSync(file, "utf8")).logins).toEqual({});
    const whoami = await runCli(["whoami", "--api", API], { env });
    expect(whoami.code).toBe(1);
    expect(whoami.stderr).toMatch(/Not logged in/);
  });
});
