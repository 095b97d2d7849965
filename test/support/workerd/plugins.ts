/**
 * Helpers for the plugin tests: a plugin worker's env built from the test
 * bindings, and identity-signed proxy requests.
 */
import { env } from "cloudflare:test";
import { IDENTITY_HEADER, signRequestToken } from "../../../src/core/requestToken.ts";
import type { PluginEnv } from "../../../src/platform/plugins/shared/pluginEnv.ts";
import type { ProjectRow } from "../../../src/platform/db/projectsTable.ts";

export const TOKEN_ENCRYPTION_KEY = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
export const STATE_SECRET = "test-state-secret-0123456789abcdef0123456789";

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
  nowMs?: number;
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
    call.asProjectId ?? call.project.id,
    call.secret ?? call.project.worker_secret,
    { method, pathAndQuery: call.signedPath ?? call.path, body: call.signedBody ?? call.body },
    call.nowMs ?? Date.now(),
  );
  return new Request((call.origin ?? "https://plugin.test") + call.path, {
    method,
    headers: { "content-type": "application/json", [IDENTITY_HEADER]: token, ...call.headers },
    body: call.body,
  });
}
