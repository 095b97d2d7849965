import { createExecutionContext, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { hex } from "#src/core/crypto/encoding.ts";
import { CLI_LOGIN_CODE_LIFETIME_MS, insertCliLogin } from "#src/workers/db/cliLoginsTable.ts";
import { sealCliFlowCookie } from "#src/workers/login/cliFlowCookie.ts";
import type { LoginEnv } from "#src/workers/login/env.ts";
import { resetIdentityProviderCache } from "#src/workers/login/identityProvider.ts";
import login from "#src/workers/login/index.ts";
import {
  ADA,
  apiHarness,
  callApi,
  callLogin,
  cookiePair,
  fakeIdentityProvider,
  FLOW_SECRET,
  LOGIN_WORKER_URL,
  loginEnv,
  type FakeIdp,
  type IdpUser,
} from "#test/support/workerd/index.ts";

beforeEach(() => resetIdentityProviderCache());

const apiEnv = () => apiHarness({ env: { LOGIN_PUBLIC_URL: LOGIN_WORKER_URL } }).env;
let client = 0;

async function startCli(): Promise<{ code: string; pollToken: string; loginUrl: string; verification: string }> {
  const response = await callApi("POST", "/cli/login", {
    body: { host: "ada-laptop" },
    headers: { "cf-connecting-ip": `10.1.0.${++client}` },
    env: apiEnv(),
  });
  expect(response.status).toBe(201);
  return (await response.json()) as { code: string; pollToken: string; loginUrl: string; verification: string };
}

async function poll(pollToken: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await callApi("POST", "/cli/login/token", { body: { pollToken }, env: apiEnv() });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function postApprove(e: LoginEnv, cookie: string, form: Record<string, string>, headers: Record<string, string> = {}) {
  return login.fetch(
    new Request(`${LOGIN_WORKER_URL}/cli/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...headers },
      body: new URLSearchParams(form),
      redirect: "manual",
    }),
    e,
    createExecutionContext(),
  );
}

/** `/cli?code` → provider → `/callback`: the approval page and its cookie. */
async function signInForCli(idp: FakeIdp, e: LoginEnv, code: string, user: IdpUser = ADA) {
  const start = await callLogin(`/cli?code=${code}`, e);
  expect(start.status, await start.clone().text()).toBe(302);
  const signinCookie = cookiePair(start.headers.get("set-cookie"));
  expect(signinCookie).toMatch(/^__Host-login_cli_flow=/);
  const back = await idp.approve(start.headers.get("location")!, user);
  const page = await callLogin(back.slice(LOGIN_WORKER_URL.length), e, { cookie: signinCookie });
  const html = await page.clone().text();
  return { page, html, signinCookie, cookie: page.ok ? cookiePair(page.headers.get("set-cookie")) : "" };
}

function csrfOf(html: string): string {
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  expect(csrf, html).toBeTruthy();
  return csrf!;
}

describe("platform login in the browser", () => {
  it("signs in, shows who and where, and hands the CLI a token once the person allows", async () => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const { page, html, cookie } = await signInForCli(idp, e, cli.code);
    expect(page.status, html).toBe(200);
    expect(html).toContain("Allow the CLI on ada-laptop to act as <strong>ada@example.com</strong> on example.test?");
    expect(html).toContain(cli.verification);
    expect(html).not.toContain(cli.code);
    expect(page.headers.get("content-security-policy")).toContain(`form-action ${LOGIN_WORKER_URL}/cli/approve`);
    expect((await poll(cli.pollToken)).body).toEqual({ status: "pending" });

    const answered = await postApprove(e, cookie, { csrf: csrfOf(html), decision: "allow" });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain("return to your terminal");
    expect(answered.headers.get("set-cookie")).toMatch(/^__Host-login_cli_flow=; Path=\/; Max-Age=0/);
    const collected = await poll(cli.pollToken);
    expect(collected.body).toMatchObject({ status: "approved", email: "ada@example.com" });

    // Replayed answer: recorded once only.
    const again = await postApprove(e, cookie, { csrf: csrfOf(html), decision: "allow" });
    expect(again.status).toBe(410);
  });

  it("records a denial, and the CLI gets no token", async () => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const { html, cookie } = await signInForCli(idp, e, cli.code);
    expect((await postApprove(e, cookie, { csrf: csrfOf(html), decision: "deny" })).status).toBe(200);
    expect((await poll(cli.pollToken)).status).toBe(403);
  });

  it.each([
    ["a malformed code", "/cli?code=xyz", 400, /no valid code/],
    ["two codes", `/cli?code=${"a".repeat(64)}&code=${"b".repeat(64)}`, 400, /no valid code/],
    ["a forged code", `/cli?code=${"0".repeat(64)}`, 404, /does not belong/],
  ])("refuses %s", async (_name, path, status, message) => {
    const e = loginEnv(await fakeIdentityProvider());
    const response = await callLogin(path, e);
    expect(response.status).toBe(status);
    expect(response.headers.get("location")).toBeNull();
    expect(await response.text()).toMatch(message);
  });

  it("opens a link once (a replayed link starts nothing) and never after 2 minutes", async () => {
    const e = loginEnv(await fakeIdentityProvider());
    const cli = await startCli();
    expect((await callLogin(`/cli?code=${cli.code}`, e)).status).toBe(302);
    const replayed = await callLogin(`/cli?code=${cli.code}`, e);
    expect(replayed.status).toBe(410);
    expect(await replayed.text()).toMatch(/already opened/);

    const old = "d".repeat(64);
    await insertCliLogin(env.DB, {
      codeHash: hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(old))),
      pollHash: "p".repeat(64),
      clientHost: "",
      now: Date.now() - CLI_LOGIN_CODE_LIFETIME_MS - 1,
    });
    const expired = await callLogin(`/cli?code=${old}`, e);
    expect(expired.status).toBe(410);
    expect(await expired.text()).toMatch(/more than 2 minutes old/);
  });

  it("refuses an unverified email at the provider", async () => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const { page, html } = await signInForCli(idp, e, cli.code, { ...ADA, email_verified: false });
    expect(page.status).toBe(403);
    expect(html).toMatch(/has not verified/);
    expect((await poll(cli.pollToken)).body).toEqual({ status: "pending" });
  });

  it.each([
    [
      "a forged form token",
      (csrf: string) => ({ form: { csrf: csrf.slice(0, -1) + (csrf.endsWith("A") ? "B" : "A"), decision: "allow" } }),
      403,
    ],
    ["no form token", () => ({ form: { decision: "allow" } }), 403],
    ["another origin", (csrf: string) => ({ form: { csrf, decision: "allow" }, origin: "https://evil.test" }), 403],
    ["an unknown decision", (csrf: string) => ({ form: { csrf, decision: "maybe" } }), 400],
  ])("refuses an answer with %s", async (_name, make, status) => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const { html, cookie } = await signInForCli(idp, e, cli.code);
    const { form, origin } = make(csrfOf(html)) as { form: Record<string, string>; origin?: string };
    const answered = await postApprove(e, cookie, form, origin ? { origin } : {});
    expect(answered.status).toBe(status);
    expect((await poll(cli.pollToken)).body).toEqual({ status: "pending" });
  });

  it("refuses an answer without the approval stage's cookie: none, the sign-in stage's, or one sealed with another key", async () => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const { html, signinCookie } = await signInForCli(idp, e, cli.code);
    const csrf = csrfOf(html);
    expect((await postApprove(e, "", { csrf, decision: "allow" })).status).toBe(400);
    expect((await postApprove(e, signinCookie, { csrf, decision: "allow" })).status).toBe(400);
    const forged = await sealCliFlowCookie("x".repeat(48), LOGIN_WORKER_URL, {
      stage: "approve",
      loginId: 1,
      verification: "AAAA-AAAA",
      clientHost: "",
      exp: Math.floor(Date.now() / 1000) + 600,
      email: "mallory@example.com",
      csrf,
    });
    expect((await postApprove(e, cookiePair(forged), { csrf, decision: "allow" })).status).toBe(400);
    expect((await poll(cli.pollToken)).body).toEqual({ status: "pending" });
    expect(FLOW_SECRET).not.toBe("x".repeat(48));
  });

  it("leaves a project sign-in's callback to the project flow when the CLI state does not match", async () => {
    const idp = await fakeIdentityProvider();
    const e = loginEnv(idp);
    const cli = await startCli();
    const start = await callLogin(`/cli?code=${cli.code}`, e);
    const signinCookie = cookiePair(start.headers.get("set-cookie"));
    // A callback whose state is not the CLI flow's: handled (and refused) as a project sign-in.
    const response = await callLogin("/callback?code=abc&state=other", e, { cookie: signinCookie });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/no sign-in in progress/);
  });
});
