/**
 * A short-lived token a plugin hands to user code so it can act on something
 * the provider gave the plugin (an interaction to answer, a click to open a
 * view with): the claims sealed with the token vault (AES-256-GCM) under a
 * context bound to one project, with an expiry. User code never holds the
 * provider's secret, one project's token does not open for another, and an
 * expired token is refused before any provider call.
 */
import { PlatformError } from "../../core/errors.ts";
import { openToken, sealToken } from "../../workers/db/tokenVault.ts";
import type { PluginEnv } from "./pluginEnv.ts";

/** One kind of short-lived token: where it is bound, how long it lives, what its refusals say. */
export interface ShortLivedTokenKind {
  /** The field user code passes it in, as errors name it: `replyToken`. */
  name: string;
  /** The vault context before the project id: `chatserver:reply`. */
  context: string;
  lifetimeMS: number;
  /** The error for a missing token: what to pass instead. */
  missing: string;
  /** The error for an expired token: how long it lives, and what to do. */
  expired: string;
}

const MAX_TOKEN_CHARS = 4096;

type VaultEnv = Pick<PluginEnv, "TOKEN_ENCRYPTION_KEY">;

export interface ShortLivedTokens<Claims extends object> {
  /** Seals `claims` for `projectId`, expiring the kind's lifetime after `now`. */
  seal(env: VaultEnv, projectId: number, claims: Claims, now?: number): Promise<string>;
  /** The claims of a token sealed for `projectId`; `invalid_input` when missing, forged, another project's or expired. */
  open(env: VaultEnv, projectId: number, token: unknown, now?: number): Promise<Claims & { exp: number }>;
}

export function shortLivedTokens<Claims extends object>(kind: ShortLivedTokenKind): ShortLivedTokens<Claims> {
  const contextOf = (projectId: number) => `${kind.context}:${projectId}`;
  return {
    seal(env, projectId, claims, now = Date.now()) {
      return sealToken(
        env.TOKEN_ENCRYPTION_KEY,
        JSON.stringify({ ...claims, exp: now + kind.lifetimeMS }),
        contextOf(projectId),
      );
    },
    async open(env, projectId, token, now = Date.now()) {
      if (typeof token !== "string" || !token || token.length > MAX_TOKEN_CHARS)
        throw new PlatformError("invalid_input", kind.missing);
      let claims: Claims & { exp: number };
      try {
        claims = JSON.parse(await openToken(env.TOKEN_ENCRYPTION_KEY, token, contextOf(projectId)));
      } catch {
        throw new PlatformError("invalid_input", `${kind.name} is not valid for this project.`);
      }
      if (typeof claims.exp !== "number" || now > claims.exp) throw new PlatformError("invalid_input", kind.expired);
      return claims;
    },
  };
}
