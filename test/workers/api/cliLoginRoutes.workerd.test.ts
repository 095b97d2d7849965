import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { hex } from "#src/core/crypto/encoding.ts";
import {
  CLI_LOGIN_CODE_LIFETIME_MS,
  CLI_LOGIN_FLOW_MS,
  decideCliLogin,
  insertCliLogin,
  openCliLogin,
} from "#src/workers/db/cliLoginsTable.ts";
import { apiHarness, callApi, createUserWithToken, expectError } from "#test/support/workerd/index.ts";

const LOGIN_URL = "https://login.example.test";
const apiEnv = () => apiHarness({ env: { LOGIN_PUBLIC_URL: LOGIN_URL } }).env;

async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

interface Started {
  code: string;
  loginUrl: string;
  pollToken: string;
  verification: string;
  expiresAt: string;
}

let client = 0;
/** Each start from its own address, so the per-address limit only bites where a test wants it to. */
async function startLogin(body: unknown = { host: "ada-laptop" }, ip = `10.0.0.${++client}`): Promise<Started> {
  const response = await callApi("POST", "/cli/login", { body, headers: { "cf-connecting-ip": ip }, env: apiEnv() });
  expect(response.status, await response.clone().text()).toBe(201);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return (await response.json()) as Started;
}

/** What the login worker does once the person signed in and allowed (cliSignInRoutes.ts). */
async function approveInBrowser(code: string, email: string, now = Date.now()): Promise<void> {
  const opened = await openCliLogin(env.DB, await sha256Hex(code), now);
  expect(opened.ok).toBe(true);
  if (opened.ok) expect(await decideCliLogin(env.DB, opened.login.id, { approvedEmail: email }, now)).toBe(true);
}

function collect(pollToken: unknown) {
  return callApi("POST", "/cli/login/token", { body: { pollToken }, env: apiEnv() });
}

describe("POST /cli/login", () => {
  it("issues a single-use code for the browser link and a separate poll token for the CLI", async () => {
    const before = Date.now();
    const started = await startLogin();
    expect(started.code).toMatch(/^[0-9a-f]{64}$/);
    expect(started.pollToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(started.loginUrl).toBe(`${LOGIN_URL}/cli?code=${started.code}`);
    expect(started.loginUrl).not.toContain(started.pollToken);
    expect(started.verification).toBe(`${started.code.slice(0, 4)}-${started.code.slice(4, 8)}`.toUpperCase());
    expect(Date.parse(started.expiresAt)).toBeGreaterThanOrEqual(before + CLI_LOGIN_CODE_LIFETIME_MS - 1000);
    // Only hashes are stored.
    const row = await env.DB.prepare("SELECT code_hash, poll_hash, client_host FROM cli_logins").first<{
      code_hash: string;
      poll_hash: string;
      client_host: string;
    }>();
    expect(row).toEqual({
      code_hash: await sha256Hex(started.code),
      poll_hash: await sha256Hex(started.pollToken),
      client_host: "ada-laptop",
    });
  });

  it.each([
    ["a host with markup", { host: "<b>evil</b>" }, 400, "invalid_input"],
    ["a host that is not a string", { host: 7 }, 400, "invalid_input"],
    ["a body that is not JSON", "not json", 400, "malformed_json"],
    ["an oversized body", { host: "a", pad: "x".repeat(2000) }, 413, "payload_too_large"],
  ] as const)("refuses %s", async (_name, body, status, code) => {
    await expectError(await callApi("POST", "/cli/login", { body, env: apiEnv() }), status, code);
  });

  it("answers 503 when the platform has no login worker", async () => {
    await expectError(await callApi("POST", "/cli/login", { body: {}, env: apiHarness().env }), 503, "not_ready");
  });

  it("limits how many logins one address starts per minute", async () => {
    for (let i = 0; i < 10; i++) await startLogin({}, "192.0.2.1");
    const refused = await expectError(
      await callApi("POST", "/cli/login", { body: {}, headers: { "cf-connecting-ip": "192.0.2.1" }, env: apiEnv() }),
      429,
      "rate_limited",
    );
    expect(refused.error.message).toMatch(/retry in \d+ s/);
    await startLogin({}, "192.0.2.2");
  });
});

describe("POST /cli/login/token", () => {
  it("is pending until approved, then gives a working CLI token exactly once", async () => {
    const started = await startLogin();
    expect(await (await collect(started.pollToken)).json()).toEqual({ status: "pending" });
    await approveInBrowser(started.code, "newcomer@example.com");
    const approved = await collect(started.pollToken);
    expect(approved.status).toBe(200);
    const body = (await approved.json()) as { status: string; email: string; token: string };
    expect(body).toMatchObject({ status: "approved", email: "newcomer@example.com" });
    expect(body.token).toMatch(/^plt_/);
    const who = await callApi("GET", "/cli/whoami", { token: body.token, env: apiEnv() });
    expect(await who.json()).toEqual({ email: "newcomer@example.com" });
    // Replayed: the token is never handed out twice.
    await expectError(await collect(started.pollToken), 410, "code_used");
  });

  it("reuses the account of an existing user", async () => {
    const ada = await createUserWithToken("ada@example.com");
    const started = await startLogin();
    await approveInBrowser(started.code, "ada@example.com");
    const body = (await (await collect(started.pollToken)).json()) as { token: string };
    const projects = await callApi("GET", "/projects", { token: body.token, env: apiEnv() });
    expect(projects.status).toBe(200);
    const row = await env.DB.prepare("SELECT COUNT(*) AS n FROM users WHERE email = ?").bind(ada.email).first();
    expect(row).toEqual({ n: 1 });
  });

  it("tells the CLI when the person denied", async () => {
    const started = await startLogin();
    const opened = await openCliLogin(env.DB, await sha256Hex(started.code), Date.now());
    if (!opened.ok) throw new Error("not opened");
    expect(await decideCliLogin(env.DB, opened.login.id, { denied: true }, Date.now())).toBe(true);
    // Answered once: a later allow changes nothing.
    expect(await decideCliLogin(env.DB, opened.login.id, { approvedEmail: "x@example.com" }, Date.now())).toBe(false);
    await expectError(await collect(started.pollToken), 403, "forbidden");
  });

  it("expires a code nobody opened in 2 minutes, and an opened one after the flow's 10 minutes", async () => {
    const now = Date.now();
    const unopened = { code: "a".repeat(64), poll: "A".repeat(43) };
    await insertCliLogin(env.DB, {
      codeHash: await sha256Hex(unopened.code),
      pollHash: await sha256Hex(unopened.poll),
      clientHost: "",
      now: now - CLI_LOGIN_CODE_LIFETIME_MS - 1,
    });
    await expectError(await collect(unopened.poll), 410, "code_expired");
    expect(await openCliLogin(env.DB, await sha256Hex(unopened.code), now)).toEqual({ ok: false, reason: "expired" });

    const stale = { code: "b".repeat(64), poll: "B".repeat(43) };
    const long = now - CLI_LOGIN_FLOW_MS - 1;
    await insertCliLogin(env.DB, {
      codeHash: await sha256Hex(stale.code),
      pollHash: await sha256Hex(stale.poll),
      clientHost: "",
      now: long,
    });
    const opened = await openCliLogin(env.DB, await sha256Hex(stale.code), long);
    if (!opened.ok) throw new Error("not opened");
    // Approved in time, collected too late: no token.
    expect(await decideCliLogin(env.DB, opened.login.id, { approvedEmail: "late@example.com" }, long)).toBe(true);
    await expectError(await collect(stale.poll), 410, "code_expired");
    // Approving after the flow's end is refused too.
    expect(await decideCliLogin(env.DB, opened.login.id, { denied: true }, now)).toBe(false);
  });

  it.each([
    ["a forged poll token", "Z".repeat(43), 401, "unauthorized"],
    ["the code instead of the poll token", "c".repeat(64), 400, "invalid_input"],
    ["a malformed poll token", "short", 400, "invalid_input"],
    ["no poll token", undefined, 400, "invalid_input"],
  ] as const)("refuses %s", async (_name, pollToken, status, code) => {
    await startLogin();
    await expectError(await collect(pollToken), status, code);
  });

  it("opens a code once only", async () => {
    const started = await startLogin();
    const hash = await sha256Hex(started.code);
    expect((await openCliLogin(env.DB, hash, Date.now())).ok).toBe(true);
    expect(await openCliLogin(env.DB, hash, Date.now())).toEqual({ ok: false, reason: "used" });
    expect(await openCliLogin(env.DB, await sha256Hex("f".repeat(64)), Date.now())).toEqual({
      ok: false,
      reason: "unknown",
    });
  });
});

describe("GET /cli/whoami and POST /cli/logout", () => {
  it("names the token's user, and logout revokes that token only", async () => {
    const first = await createUserWithToken("ada@example.com");
    const second = await createUserWithToken("ada@example.com");
    expect(await (await callApi("GET", "/cli/whoami", { token: first.token, env: apiEnv() })).json()).toEqual({
      email: "ada@example.com",
    });
    const out = await callApi("POST", "/cli/logout", { token: first.token, env: apiEnv() });
    expect(await out.json()).toEqual({ revoked: true });
    await expectError(await callApi("GET", "/cli/whoami", { token: first.token, env: apiEnv() }), 401, "unauthorized");
    // Replayed logout: the token is gone.
    await expectError(await callApi("POST", "/cli/logout", { token: first.token, env: apiEnv() }), 401, "unauthorized");
    expect((await callApi("GET", "/cli/whoami", { token: second.token, env: apiEnv() })).status).toBe(200);
  });

  it.each([
    ["no token", undefined],
    ["a forged token", `plt_${"x".repeat(43)}`],
    ["a malformed token", "nope"],
  ])("answers 401 for %s", async (_name, token) => {
    await expectError(await callApi("GET", "/cli/whoami", { token, env: apiEnv() }), 401, "unauthorized");
    await expectError(await callApi("POST", "/cli/logout", { token, env: apiEnv() }), 401, "unauthorized");
  });
});
