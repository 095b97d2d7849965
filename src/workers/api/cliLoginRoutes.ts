import { hex, randomBase64url } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import {
  CLI_LOGIN_CODE_LIFETIME_MS,
  cliLoginVerification,
  insertCliLogin,
  pollCliLogin,
} from "../db/cliLoginsTable.ts";
import { deleteCliToken, insertCliToken } from "../db/cliTokensTable.ts";
import { upsertUserByEmail } from "../db/usersTable.ts";
import { generateCliToken, hashCliToken } from "./cliTokens.ts";
import type { ApiEnv } from "./env.ts";
import type { CliRequest } from "./withCliUser.ts";

/** New logins per client address per minute: the route needs no account. */
const LOGIN_RATE = { limit: 10, windowMS: 60_000 } as const;
const POLL_TOKEN = /^[A-Za-z0-9_-]{43}$/;
const NO_STORE = { "Cache-Control": "no-store" };

async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

/** A machine name to show on the approval page: printable, short, or nothing. */
function clientHostOf(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value !== "string" || !/^[A-Za-z0-9._-]{0,64}$/.test(value))
    throw new PlatformError("invalid_input", "host must be a machine name: up to 64 letters, digits, dots, dashes.");
  return value;
}

/**
 * `POST /cli/login { host? }` (no account yet) → 201 `{ code, loginUrl,
 * pollToken, verification, expiresAt }`. The browser link carries only the
 * code (32 random bytes, hex; opened once within 2 minutes by the login
 * worker's `/cli`); the CLI keeps the poll token, the only thing that can
 * collect the CLI token once the person approved.
 */
export async function startCliLogin(request: Request, env: ApiEnv): Promise<Response> {
  const body = await readJsonObject(request, 1024);
  const clientHost = clientHostOf(body.host);
  if (!env.LOGIN_PUBLIC_URL)
    throw new PlatformError("not_ready", "This platform has no login worker configured (LOGIN_PUBLIC_URL is not set).");
  const client = request.headers.get("cf-connecting-ip") ?? "local";
  const limiter = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("cli-login"));
  const decision = await limiter.take(`start:${client}`, LOGIN_RATE.limit, LOGIN_RATE.windowMS);
  if (!decision.allowed)
    throw new PlatformError(
      "rate_limited",
      `Too many sign-ins started from here: retry in ${decision.retryAfterSeconds} s.`,
      { retryAfterSeconds: decision.retryAfterSeconds },
    );
  const code = hex(crypto.getRandomValues(new Uint8Array(32)));
  const pollToken = randomBase64url(32);
  const now = Date.now();
  await insertCliLogin(env.DB, {
    codeHash: await sha256Hex(code),
    pollHash: await sha256Hex(pollToken),
    clientHost,
    now,
  });
  const loginUrl = `${env.LOGIN_PUBLIC_URL.replace(/\/+$/, "")}/cli?code=${code}`;
  return Response.json(
    {
      code,
      loginUrl,
      pollToken,
      verification: cliLoginVerification(code),
      expiresAt: new Date(now + CLI_LOGIN_CODE_LIFETIME_MS).toISOString(),
    },
    { status: 201, headers: NO_STORE },
  );
}

/**
 * `POST /cli/login/token { pollToken }` → 200 `{ status: "pending" }` while the
 * person has not answered; 200 `{ status: "approved", email, token }` once
 * (the user is created on first sign-in); then 410 `code_used`. A refusal in
 * the browser is 403 `forbidden`, a dead login 410 `code_expired`, an unknown
 * poll token 401.
 */
export async function collectCliLogin(request: Request, env: ApiEnv): Promise<Response> {
  const body = await readJsonObject(request, 1024);
  if (typeof body.pollToken !== "string" || !POLL_TOKEN.test(body.pollToken))
    throw new PlatformError("invalid_input", "pollToken must be the poll token POST /cli/login gave.");
  const now = Date.now();
  const poll = await pollCliLogin(env.DB, await sha256Hex(body.pollToken), now);
  switch (poll.state) {
    case "pending":
      return Response.json({ status: "pending" }, { headers: NO_STORE });
    case "unknown":
      throw new PlatformError("unauthorized", "No sign-in has this poll token.");
    case "redeemed":
      throw new PlatformError("code_used", "This sign-in already gave its CLI token.");
    case "denied":
      throw new PlatformError("forbidden", "The sign-in was refused in the browser.");
    case "expired":
      throw new PlatformError("code_expired", "This sign-in expired: run `platform login` again.");
  }
  const user = await upsertUserByEmail(env.DB, poll.email, now);
  const token = generateCliToken();
  await insertCliToken(env.DB, {
    userId: user.id,
    tokenHash: await hashCliToken(token),
    label: "platform login",
    createdAt: now,
  });
  return Response.json({ status: "approved", email: user.email, token }, { headers: NO_STORE });
}

/** `GET /cli/whoami` → `{ email }` of the CLI token's user. */
export function whoAmI(request: CliRequest): Response {
  return Response.json({ email: request.user.email });
}

/** `POST /cli/logout`: deletes the CLI token this request carries (withCliUser checked it). */
export async function revokeCliToken(request: CliRequest, env: ApiEnv): Promise<Response> {
  const token = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")![1]!;
  await deleteCliToken(env.DB, await hashCliToken(token));
  return Response.json({ revoked: true });
}
