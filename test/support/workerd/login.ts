/**
 * Helpers for the login worker's workerd tests: a fake OpenID Connect
 * provider that checks what it receives (client authentication, redirect
 * URI, PKCE S256, single-use codes) and mints ID tokens with `jose`, which a
 * test can bend one claim at a time; plus the env and the two legs of a
 * sign-in (`/start`, `/callback`) driven through the worker's real export.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from "jose";
import { expect } from "vitest";
import { bindingHash, signSignInStart } from "#src/core/callbackToken.ts";
import { base64url } from "#src/core/crypto/encoding.ts";
import type { LoginEnv } from "#src/workers/login/env.ts";
import login from "#src/workers/login/index.ts";
import { callApi, createUserWithToken, projectRow } from "./api.ts";

export const ISSUER = "https://idp.example.test";
export const CLIENT_ID = "platform-login";
export const CLIENT_SECRET = "client secret with spaces & symbols";
export const LOGIN_WORKER_URL = "https://login.example.test";
export const FLOW_SECRET = "f".repeat(48);

export interface IdpUser {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
  picture?: unknown;
  [claim: string]: unknown;
}

/** How the fake bends the ID token it mints for one code. */
export interface IdTokenTweaks {
  issuer?: string;
  audience?: string | string[];
  nonce?: string | null;
  /** Seconds relative to now. */
  iat?: number;
  exp?: number;
  /** Sign with this key instead of the published one (same kid). */
  signWith?: CryptoKey;
  alg?: string;
  kid?: string;
  azp?: string;
  /** A fully custom token string. */
  raw?: string;
  /** Claims only userinfo gives (the ID token then carries just `sub`). */
  claimsInUserinfoOnly?: boolean;
  userinfoSub?: string;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  challenge: string;
  nonce: string;
  user: IdpUser;
  tweaks: IdTokenTweaks;
  used: boolean;
}

export interface FakeIdp {
  fetcher: Fetcher;
  /** Every request the provider received, as `METHOD path`. */
  log: string[];
  tokenRequests: number;
  /** Acts as the provider's authorization page after the person approved: returns the redirect back to the login worker. */
  approve(authorizeUrl: string, user: IdpUser, tweaks?: IdTokenTweaks): Promise<string>;
  /** Publishes another key (key rotation) and signs new tokens with it. */
  rotateKey(): Promise<void>;
  otherKey: CryptoKey;
  discovery: Record<string, unknown>;
}

async function s256(verifier: string): Promise<string> {
  return base64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

export async function fakeIdentityProvider(
  options: { issuer?: string; discovery?: Record<string, unknown> } = {},
): Promise<FakeIdp> {
  const issuer = options.issuer ?? ISSUER;
  let key = await generateKeyPair("RS256");
  let kid = "key-1";
  let published: JWK[] = [{ ...(await exportJWK(key.publicKey)), kid, alg: "RS256", use: "sig" }];
  const other = await generateKeyPair("RS256");
  const codes = new Map<string, PendingCode>();
  const accessTokens = new Map<string, { user: IdpUser; tweaks: IdTokenTweaks }>();
  const log: string[] = [];
  const discovery: Record<string, unknown> = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    userinfo_endpoint: `${issuer}/userinfo`,
    response_types_supported: ["code"],
    id_token_signing_alg_values_supported: ["RS256"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
    ...options.discovery,
  };
  const state = { tokenRequests: 0 };

  const oauthError = (error: string, status = 400) => Response.json({ error, error_description: error }, { status });

  async function mintIdToken(code: PendingCode): Promise<string> {
    const { tweaks, user } = code;
    if (tweaks.raw) return tweaks.raw;
    const now = Math.floor(Date.now() / 1000);
    const claims: JWTPayload = tweaks.claimsInUserinfoOnly ? { sub: user.sub } : { ...user };
    if (tweaks.nonce !== null) claims.nonce = tweaks.nonce ?? code.nonce;
    if (tweaks.azp !== undefined) claims.azp = tweaks.azp;
    const jwt = new SignJWT(claims)
      .setProtectedHeader({ alg: tweaks.alg ?? "RS256", kid: tweaks.kid ?? kid })
      .setIssuer(tweaks.issuer ?? issuer)
      .setAudience(tweaks.audience ?? code.clientId)
      .setIssuedAt(now + (tweaks.iat ?? 0))
      .setExpirationTime(now + (tweaks.exp ?? 300));
    if (tweaks.alg === "HS256") return jwt.sign(new TextEncoder().encode(CLIENT_SECRET));
    return jwt.sign(tweaks.signWith ?? key.privateKey);
  }

  const fetcher = {
    async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
      const request = new Request(input, init);
      const url = new URL(request.url);
      log.push(`${request.method} ${url.pathname}`);
      if (url.origin !== new URL(issuer).origin) return new Response("unknown host", { status: 404 });
      if (request.method === "GET" && url.pathname === "/.well-known/openid-configuration")
        return Response.json(discovery);
      if (request.method === "GET" && url.pathname === "/jwks") return Response.json({ keys: published });
      if (request.method === "POST" && url.pathname === "/token") {
        state.tokenRequests++;
        const auth = request.headers.get("authorization") ?? "";
        const expected =
          "Basic " + btoa(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET).replace(/%20/g, "+")}`);
        if (auth !== expected) return oauthError("invalid_client", 401);
        if (!(request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded"))
          return oauthError("invalid_request");
        const form = new URLSearchParams(await request.text());
        if (form.get("grant_type") !== "authorization_code") return oauthError("unsupported_grant_type");
        const code = codes.get(form.get("code") ?? "");
        if (!code || code.used) return oauthError("invalid_grant");
        code.used = true;
        if (form.get("redirect_uri") !== code.redirectUri) return oauthError("invalid_grant");
        const verifier = form.get("code_verifier") ?? "";
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || (await s256(verifier)) !== code.challenge)
          return oauthError("invalid_grant");
        const accessToken = base64url(crypto.getRandomValues(new Uint8Array(16)));
        accessTokens.set(accessToken, { user: code.user, tweaks: code.tweaks });
        return Response.json({
          access_token: accessToken,
          token_type: "Bearer",
          expires_in: 3600,
          id_token: await mintIdToken(code),
        });
      }
      if (request.method === "GET" && url.pathname === "/userinfo") {
        const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
        const grant = token ? accessTokens.get(token) : undefined;
        if (!grant) return new Response(null, { status: 401 });
        return Response.json({ ...grant.user, sub: grant.tweaks.userinfoSub ?? grant.user.sub });
      }
      return new Response("not found", { status: 404 });
    },
  };

  return {
    fetcher: fetcher as unknown as Fetcher,
    log,
    get tokenRequests() {
      return state.tokenRequests;
    },
    discovery,
    otherKey: other.privateKey,
    async approve(authorizeUrl, user, tweaks = {}) {
      const url = new URL(authorizeUrl);
      expect(`${url.origin}${url.pathname}`).toBe(discovery.authorization_endpoint);
      const params = url.searchParams;
      expect(params.get("response_type")).toBe("code");
      expect(params.get("code_challenge_method")).toBe("S256");
      expect(params.get("scope")!.split(" ")).toEqual(expect.arrayContaining(["openid", "email", "profile"]));
      const code = base64url(crypto.getRandomValues(new Uint8Array(24)));
      codes.set(code, {
        clientId: params.get("client_id")!,
        redirectUri: params.get("redirect_uri")!,
        challenge: params.get("code_challenge")!,
        nonce: params.get("nonce")!,
        user,
        tweaks,
        used: false,
      });
      const back = new URL(params.get("redirect_uri")!);
      back.searchParams.set("code", code);
      back.searchParams.set("state", params.get("state")!);
      back.searchParams.set("iss", issuer);
      return back.toString();
    },
    async rotateKey() {
      key = await generateKeyPair("RS256");
      kid = `key-${published.length + 1}`;
      published = [...published, { ...(await exportJWK(key.publicKey)), kid, alg: "RS256", use: "sig" }];
    },
  };
}

export function loginEnv(idp: FakeIdp, overrides: Partial<LoginEnv> = {}): LoginEnv {
  return {
    DB: env.DB,
    OIDC_ISSUER: ISSUER,
    OIDC_CLIENT_ID: CLIENT_ID,
    OIDC_CLIENT_SECRET: CLIENT_SECRET,
    LOGIN_FLOW_SECRET: FLOW_SECRET,
    LOGIN_PUBLIC_URL: LOGIN_WORKER_URL,
    PLATFORM_DOMAIN: "example.test",
    IDENTITY_PROVIDER: idp.fetcher,
    ...overrides,
  };
}

export function callLogin(
  path: string,
  loginEnvValue: LoginEnv,
  headers: Record<string, string> = {},
): Promise<Response> {
  return login.fetch(
    new Request(loginEnvValue.LOGIN_PUBLIC_URL + path, { headers, redirect: "manual" }),
    loginEnvValue,
    createExecutionContext(),
  );
}

/**
 * A page the login worker refuses with: HTML with `status`, no redirect, and words matching `pattern`.
 * Returns the page.
 */
export async function expectLoginRefusal(response: Response, status: number, pattern: RegExp): Promise<string> {
  const html = await response.text();
  expect(response.status, html).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^text\/html/);
  expect(response.headers.get("location")).toBeNull();
  expect(html).toMatch(pattern);
  return html;
}

export interface TestProject {
  id: number;
  slug: string;
  secret: string;
}

/** A project created through the API, with `auth` metadata registered the way `platform push` does. */
export async function projectWithAuth(
  slug: string,
  auth: { domains?: string[]; sessionMaxAge?: number } | null = {},
  options: { private?: boolean; owner?: string } = {},
): Promise<TestProject> {
  const user = await createUserWithToken(options.owner ?? "owner@example.net");
  const created = await callApi("POST", "/projects", {
    token: user.token,
    body: { slug, private: options.private ?? false },
  });
  expect(created.status, await created.clone().text()).toBe(201);
  if (auth) {
    const put = await callApi("PUT", `/projects/${slug}/metadata`, { token: user.token, body: { auth } });
    expect(put.status, await put.clone().text()).toBe(200);
  }
  const row = await projectRow(slug);
  return { id: row.id, slug, secret: row.worker_secret };
}

/** The value a project would keep in its binding cookie, and the hash it sends as `bind`. */
export async function browserBinding(): Promise<{ value: string; hash: string }> {
  const value = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { value, hash: await bindingHash(value) };
}

/**
 * `/start?project&redirect&bind&exp&sig` as the project would send it: signed
 * with the project's worker secret from D1 (`signWith` overrides it: a
 * neighbour's secret, a forger's). An unknown project is signed with a dummy secret.
 */
export async function startPath(
  params: { project: string; redirect: string; bind: string },
  options: { signWith?: { id: number; secret: string }; nowMS?: number } = {},
): Promise<string> {
  const row = await env.DB.prepare("SELECT id, worker_secret FROM projects WHERE slug = ?")
    .bind(params.project)
    .first<{ id: number; worker_secret: string }>();
  const signer = options.signWith ?? { id: row?.id ?? 0, secret: row?.worker_secret ?? "0".repeat(64) };
  const { exp, sig } = await signSignInStart(
    signer.secret,
    signer.id,
    { slug: params.project, redirect: params.redirect, bind: params.bind },
    options.nowMS,
  );
  return `/start?${new URLSearchParams({ ...params, exp: String(exp), sig })}`;
}

/** The `name=value` of a Set-Cookie header, for sending back as Cookie. */
export function cookiePair(setCookie: string | null): string {
  expect(setCookie).toBeTruthy();
  return setCookie!.split(";", 1)[0]!;
}

export interface SignInResult {
  start: Response;
  callback: Response;
  flowCookie: string;
  callbackUrl: string;
}

/** Runs both legs of a sign-in for `user` with the fake provider's approval in between. */
export async function signInAtLoginWorker(
  idp: FakeIdp,
  e: LoginEnv,
  input: { slug: string; bind: string; redirect?: string; user: IdpUser; tweaks?: IdTokenTweaks },
): Promise<SignInResult> {
  const start = await callLogin(
    await startPath({ project: input.slug, redirect: input.redirect ?? "/", bind: input.bind }),
    e,
  );
  expect(start.status, await start.clone().text()).toBe(302);
  const flowCookie = cookiePair(start.headers.get("set-cookie"));
  const callbackUrl = await idp.approve(start.headers.get("location")!, input.user, input.tweaks);
  expect(callbackUrl.startsWith(e.LOGIN_PUBLIC_URL + "/callback?")).toBe(true);
  const callback = await callLogin(callbackUrl.slice(e.LOGIN_PUBLIC_URL.length), e, { cookie: flowCookie });
  return { start, callback, flowCookie, callbackUrl };
}

export const ADA: IdpUser = { sub: "ada-1", email: "ada@example.com", email_verified: true, name: "Ada Lovelace" };
