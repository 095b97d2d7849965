/**
 * Fixtures of the plugin tests: a plugin worker's env built from the test
 * bindings, identity-signed proxy requests, two projects of two users, and the
 * PlatformError a plugin call rejects with.
 */
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { IDENTITY_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import { createFakeEmailProvider, type FakeEmailProvider } from "#src/dev/fakes/email/fakeEmailProvider.ts";
import type { EmailPluginEnv } from "#src/plugins/email-send/env.ts";
import type { PluginEnv } from "#src/plugins/kit/pluginEnv.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { userWithProject } from "./api.ts";

export const TOKEN_ENCRYPTION_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
export const STATE_SECRET = "test-state-secret-0123456789abcdef0123456789";

/** A healthy connection as the platform lists it (no token in it): connected at some time, never refused or revoked. */
export function healthyConnectionSummary(plugin: string, externalUserId: string, tokenExpiresAt: string | null = null) {
  return {
    plugin,
    externalUserId,
    connectedAt: expect.any(String),
    tokenExpiresAt,
    status: "active",
    revoked: false,
    revokedAt: null,
    lastError: null,
    lastErrorAt: null,
    problem: null,
  };
}

export function pluginEnv(extra: Record<string, unknown> = {}): PluginEnv {
  return {
    DB: env.DB,
    RATE_LIMITER: env.RATE_LIMITER,
    SESSION_CODES: env.SESSION_CODES,
    TOKEN_ENCRYPTION_KEY,
    STATE_SECRET,
    ...extra,
  } as PluginEnv;
}

export interface SignedCall {
  project: Pick<ProjectRow, "id" | "worker_secret">;
  path: string;
  body: string;
  method?: string;
  /** Sign as another project id (with `project`'s secret) or with another secret. */
  asProjectId?: number | string;
  secret?: string;
  nowMS?: number;
  /** Sign this path instead of the one requested. */
  signedPath?: string;
  signedBody?: string;
  headers?: Record<string, string>;
  origin?: string;
}

export async function signedRequest(call: SignedCall): Promise<Request> {
  const method = call.method ?? "POST";
  const token = await signRequestToken(
    "identity",
    { method, pathAndQuery: call.signedPath ?? call.path, body: call.signedBody ?? call.body },
    {
      projectId: call.asProjectId ?? call.project.id,
      secret: call.secret ?? call.project.worker_secret,
      nowMS: call.nowMS ?? Date.now(),
    },
  );
  return new Request((call.origin ?? "https://plugin.test") + call.path, {
    method,
    headers: { "content-type": "application/json", [IDENTITY_HEADER]: token, ...call.headers },
    body: call.body,
  });
}

/** The D1 rows of two projects owned by two users: "alpha" (ada) and "beta" (bob). */
export async function twoProjects(): Promise<{ a: ProjectRow; b: ProjectRow }> {
  const a = await userWithProject("ada@example.com", "alpha");
  const b = await userWithProject("bob@example.com", "beta");
  return { a: a.row, b: b.row };
}

/** The PlatformError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function platformRejection(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

/** The email-send plugin worker's env, sending from mail.example.test through the fake email provider that knows `apiKey`. */
export function emailPluginWithFake(apiKey: string): { fake: FakeEmailProvider; env: EmailPluginEnv } {
  const fake = createFakeEmailProvider({ apiKey });
  const env = pluginEnv({
    EMAIL_API_KEY: apiKey,
    EMAIL_API_BASE: "https://email.fake",
    SENDER_DOMAIN: "mail.example.test",
    EMAIL_API: { fetch: (input: RequestInfo | URL, init?: RequestInit) => fake.fetch(new Request(input, init)) },
  }) as EmailPluginEnv;
  return { fake, env };
}
