/**
 * Shared pieces of the sign-in tests (test/runtime/auth/*.workerd.test.ts): a project
 * that uses `auth`, wrapped by the real entry; the four deployment modes; a
 * tiny cookie jar; and the two sign-in flows driven end to end.
 */
import { createExecutionContext, env as testEnv } from "cloudflare:test";
import { Router, type IRequest } from "itty-router";
import { expect } from "vitest";
import { auth } from "#src/runtime/auth/index.ts";
import { userKeyOf } from "#src/runtime/auth/session.ts";
import { newSessionId, sealSession, type SessionRecord } from "#src/runtime/auth/sessionSeal.ts";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { bindingHash, signCallbackToken } from "#src/core/callbackToken.ts";
import api from "#src/workers/api/index.ts";
import type { ApiEnv } from "#src/workers/api/env.ts";

export const SECRET = "ab".repeat(32);
export const OTHER_SECRET = "cd".repeat(32);
export const PROJECT_ID = 7;
export const SLUG = "shop";
export const LOGIN_URL = "https://login.example.app";

/** A deployment mode; `loginUrl` (local only) switches the local project to the deployed (idp) flow. */
export type Mode = { name: string; local: boolean; private: boolean; loginUrl?: string };

export const LOCAL_PUBLIC: Mode = { name: "local public", local: true, private: false };
export const LOCAL_PRIVATE: Mode = { name: "local private", local: true, private: true };
export const DEPLOYED_PUBLIC: Mode = { name: "deployed public", local: false, private: false };
export const DEPLOYED_PRIVATE: Mode = { name: "deployed private", local: false, private: true };
export const MODES = [LOCAL_PUBLIC, LOCAL_PRIVATE, DEPLOYED_PUBLIC, DEPLOYED_PRIVATE];

export function isIdp(mode: Mode): boolean {
  return !mode.local || Boolean(mode.loginUrl);
}

/**
 * `PLATFORM_API` as a project worker has it: the real API worker on the test
 * D1, where the project under test (id PROJECT_ID, secret SECRET) is
 * registered on first use, so `POST /internal/auth/redeem` runs for real.
 * `calls` counts the requests it received.
 */
export const platformApi = {
  calls: 0,
  async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    platformApi.calls++;
    const db = (testEnv as unknown as ApiEnv).DB;
    await db.batch([
      db.prepare("INSERT OR IGNORE INTO users (id, email, created_at) VALUES (1000, 'auth-owner@example.net', 0)"),
      db
        .prepare(
          "INSERT OR IGNORE INTO projects (id, slug, owner_id, worker_secret, script_name, private, created_at, updated_at) VALUES (?, ?, 1000, ?, 'proj-shop-auth', 0, 0, 0)",
        )
        .bind(PROJECT_ID, SLUG, SECRET),
    ]);
    return api.fetch!(
      new Request(input, init) as Request<unknown, IncomingRequestCfProperties>,
      testEnv as unknown as ApiEnv,
      createExecutionContext(),
    );
  },
} as unknown as Fetcher & { calls: number };

export function envOf(mode: Mode, overrides: Partial<PlatformEnv> = {}): PlatformEnv {
  const env: PlatformEnv = {
    PLATFORM_WORKER_SECRET: SECRET,
    PLATFORM_PROJECT_ID: String(PROJECT_ID),
    PLATFORM_PROJECT_SLUG: SLUG,
    PLATFORM_API: platformApi,
  };
  if (mode.local) env.PLATFORM_LOCAL = "1";
  if (!mode.local) env.PLATFORM_LOGIN_URL = LOGIN_URL;
  if (mode.loginUrl) env.PLATFORM_LOGIN_URL = mode.loginUrl;
  return { ...env, ...overrides };
}

export function originOf(mode: Mode): string {
  if (mode.local) return mode.private ? "http://localhost:8787" : "http://127.0.0.1:8787";
  return mode.private ? "https://example.app" : "https://shop.example.app";
}

export function basePathOf(mode: Mode): string {
  return mode.private ? `/${SLUG}` : "";
}

export function sessionCookieName(mode: Mode): string {
  if (mode.local) return mode.private ? `platform_session_${SLUG}` : "platform_session";
  return mode.private ? `__Secure-platform_session_${SLUG}` : "__Host-platform_session";
}

export function bindCookieName(mode: Mode): string {
  if (mode.local) return mode.private ? `platform_bind_${SLUG}` : "platform_bind";
  return mode.private ? `__Secure-platform_bind_${SLUG}` : "__Host-platform_bind";
}

/**
 * The project under test: a home page, `/api/private/*` and the page `/private`
 * behind `auth.require()`, `/no-redirect` behind `auth.require({ redirect: false })`,
 * `auth.signOutEverywhere` for the request's user (`POST /api/private/sign-out-everywhere`,
 * and unprotected at `POST /sign-out-everywhere`) and for an address (`POST /admin/sign-out`
 * `{ email }`), and unprotected routes.
 */
export function authProject() {
  const router = Router<IRequest, [PlatformEnv, ExecutionContext]>();
  router.all("/api/private/*", auth.require());
  router.all("/private", auth.require());
  router.get("/private", () => new Response("private page"));
  router.all("/no-redirect", auth.require({ redirect: false }));
  router.get("/no-redirect", () => new Response("no-redirect page"));
  router.get("/api/private/me", async (request) => Response.json(await auth.user(request)));
  router.get("/whoami", async (request) => Response.json({ user: await auth.user(request) }));
  router.post("/api/private/sign-out-everywhere", async (request) =>
    Response.json({ ended: await auth.signOutEverywhere(request) }),
  );
  router.post("/sign-out-everywhere", async (request) =>
    Response.json({ ended: await auth.signOutEverywhere(request) }),
  );
  router.post("/admin/sign-out", async (request) =>
    Response.json({ ended: await auth.signOutEverywhere(((await request.json()) as { email: string }).email) }),
  );
  router.get("/", () => new Response("home"));
  return createPlatformWorker(router);
}

const worker = authProject();

export interface SendInit extends RequestInit {
  /** `name=value` pairs for the Cookie header. */
  cookies?: string[];
  env?: PlatformEnv;
}

/** A request as the gateway delivers it: the public URL, and `X-Platform-Base-Path` on private deployments. */
export async function send(mode: Mode, path: string, init: SendInit = {}): Promise<Response> {
  const { cookies, env, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (mode.private) headers.set("X-Platform-Base-Path", basePathOf(mode));
  if (cookies?.length) headers.set("Cookie", cookies.join("; "));
  const request = new Request(originOf(mode) + basePathOf(mode) + path, { ...rest, headers, redirect: "manual" });
  return worker.fetch!(
    request as Request<unknown, IncomingRequestCfProperties>,
    env ?? envOf(mode),
    createExecutionContext(),
  );
}

export interface ParsedSetCookie {
  name: string;
  value: string;
  /** Attribute names lower-cased → value ("" for flags). */
  attributes: Record<string, string>;
  raw: string;
}

export function setCookies(response: Response): ParsedSetCookie[] {
  return response.headers.getSetCookie().map((raw) => {
    const [pair, ...attrs] = raw.split(";").map((p) => p.trim());
    const at = pair!.indexOf("=");
    const attributes: Record<string, string> = {};
    for (const attr of attrs) {
      const eq = attr.indexOf("=");
      attributes[(eq === -1 ? attr : attr.slice(0, eq)).toLowerCase()] = eq === -1 ? "" : attr.slice(eq + 1);
    }
    return { name: pair!.slice(0, at), value: pair!.slice(at + 1), attributes, raw };
  });
}

export function cookieNamed(response: Response, name: string): ParsedSetCookie | undefined {
  return setCookies(response).find((c) => c.name === name);
}

/** No live session cookie was set (a clearing one, `Max-Age=0`, is fine). */
export function expectNoSession(response: Response, mode: Mode): void {
  const session = cookieNamed(response, sessionCookieName(mode));
  if (session)
    expect({ value: session.value, maxAge: session.attributes["max-age"] }).toEqual({ value: "", maxAge: "0" });
}

export function sessionPair(response: Response, mode: Mode): string {
  const cookie = cookieNamed(response, sessionCookieName(mode));
  expect(cookie, `a ${sessionCookieName(mode)} cookie`).toBeDefined();
  expect(cookie!.value).not.toBe("");
  return `${cookie!.name}=${cookie!.value}`;
}

/**
 * A session value sealed directly (for forged, expired and other-project
 * cases), recorded in the platform's `project_sessions` as a sign-in would
 * (`{ recorded: false }`: sealed only, never recorded).
 */
export async function sealedSession(
  record: Partial<SessionRecord> = {},
  secret = SECRET,
  options: { recorded?: boolean } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const full: SessionRecord = {
    pid: PROJECT_ID,
    email: "ada@example.com",
    name: "Ada",
    iat: now,
    exp: now + 3600,
    sid: newSessionId(),
    ...record,
  };
  if (options.recorded !== false) {
    await (testEnv as unknown as ApiEnv).DB.prepare(
      "INSERT INTO project_sessions (project_id, sid, user_key, expires_at) VALUES (?, ?, ?, ?)",
    )
      .bind(full.pid, full.sid, await userKeyOf(full.email), full.exp)
      .run();
  }
  return sealSession(secret, full);
}

/** What both sign-in flows keep of their start: its response, for assertions on its headers. */
interface SignInStart {
  response: Response;
}

/**
 * GET the sign-in start for `redirect`, which must answer `status`: 200 for the local form, 302 for the
 * way to the login worker.
 */
async function getSignInStart(mode: Mode, redirect: string, status: number, env?: PlatformEnv): Promise<Response> {
  const response = await send(mode, `/api/auth/signin/idp?redirect=${encodeURIComponent(redirect)}`, { env });
  expect(response.status).toBe(status);
  return response;
}

// ---------------------------------------------------------------------------
// The local dummy form
// ---------------------------------------------------------------------------

export interface LocalForm extends SignInStart {
  csrf: string;
  redirect: string;
  /** `name=value` of the CSRF nonce cookie. */
  nonceCookie: string;
  page: string;
}

export async function openLocalForm(mode: Mode, redirect = "/", env?: PlatformEnv): Promise<LocalForm> {
  const response = await getSignInStart(mode, redirect, 200, env);
  const page = await response.text();
  const csrf = /name="csrf" value="([^"]*)"/.exec(page)?.[1];
  const hidden = /name="redirect" value="([^"]*)"/.exec(page)?.[1];
  const nonce = setCookies(response).find((c) => c.name.startsWith("platform_csrf"));
  expect(csrf && hidden !== undefined && nonce).toBeTruthy();
  return {
    csrf: csrf!,
    redirect: hidden!.replaceAll("&amp;", "&"),
    nonceCookie: `${nonce!.name}=${nonce!.value}`,
    page,
    response,
  };
}

export interface FormPost {
  fields: Record<string, string>;
  cookies?: string[];
  headers?: Record<string, string>;
  env?: PlatformEnv;
}

export function postLocalForm(mode: Mode, post: FormPost): Promise<Response> {
  return send(mode, "/api/auth/signin/idp", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: originOf(mode), ...post.headers },
    body: new URLSearchParams(post.fields).toString(),
    cookies: post.cookies,
    env: post.env,
  });
}

// ---------------------------------------------------------------------------
// The deployed flow (binding cookie → login worker → callback token)
// ---------------------------------------------------------------------------

export interface StartedFlow extends SignInStart {
  /** `name=value` of the binding cookie. */
  bindCookie: string;
  bindValue: string;
  location: URL;
}

export async function startIdpFlow(mode: Mode, redirect = "/", env?: PlatformEnv): Promise<StartedFlow> {
  const response = await getSignInStart(mode, redirect, 302, env);
  const bind = cookieNamed(response, bindCookieName(mode));
  expect(bind).toBeDefined();
  return {
    bindCookie: `${bind!.name}=${bind!.value}`,
    bindValue: bind!.value,
    location: new URL(response.headers.get("location")!),
    response,
  };
}

export interface TokenInput {
  email?: string;
  name?: string;
  picture?: string;
  rdr?: string;
  pid?: number;
  secret?: string;
  nowMS?: number;
}

/** What the login worker mints for a flow, per the shared callback-token contract. */
export async function callbackToken(bindValue: string, input: TokenInput = {}): Promise<string> {
  const claims = {
    pid: input.pid ?? PROJECT_ID,
    email: input.email ?? "ada@example.com",
    name: input.name ?? "Ada Lovelace",
    bnd: await bindingHash(bindValue),
    rdr: input.rdr ?? "/",
    ...(input.picture ? { picture: input.picture } : {}),
  };
  return signCallbackToken(input.secret ?? SECRET, claims, input.nowMS);
}

/** The login worker's form arriving at the project: `POST /api/auth/callback` with `token=…` in the body. */
export function callback(mode: Mode, token: string, cookies: string[] = [], env?: PlatformEnv): Promise<Response> {
  return postCallback(mode, new URLSearchParams({ token }).toString(), cookies, env);
}

/** `POST /api/auth/callback` with any body and content type (for malformed and oversized bodies). */
export function postCallback(
  mode: Mode,
  body: string,
  cookies: string[] = [],
  env?: PlatformEnv,
  contentType = "application/x-www-form-urlencoded",
): Promise<Response> {
  // The login worker's page sends no Referer (no-referrer), so its cross-site POST says `Origin: null`.
  return send(mode, "/api/auth/callback", {
    method: "POST",
    headers: { "content-type": contentType, origin: "null", "sec-fetch-site": "cross-site" },
    body,
    cookies,
    env,
  });
}

/** Signs in with whichever flow the mode uses; the final response (303 with the session cookie). */
export async function signInResponse(mode: Mode, email = "ada@example.com", name = "Ada Lovelace"): Promise<Response> {
  let response: Response;
  if (isIdp(mode)) {
    const flow = await startIdpFlow(mode);
    response = await callback(mode, await callbackToken(flow.bindValue, { email, name }), [flow.bindCookie]);
  } else {
    const form = await openLocalForm(mode);
    response = await postLocalForm(mode, {
      fields: { csrf: form.csrf, redirect: form.redirect, email, name, action: "login" },
      cookies: [form.nonceCookie],
    });
  }
  expect(response.status).toBe(303);
  return response;
}

/** Signs in and returns the session cookie as `name=value`. */
export async function signIn(mode: Mode, email = "ada@example.com", name = "Ada Lovelace"): Promise<string> {
  return sessionPair(await signInResponse(mode, email, name), mode);
}
