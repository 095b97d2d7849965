import type { LoginEnv } from "./env.ts";
import { LoginError } from "./pages.ts";

/** Refuses to run half-configured: every required binding present and sane, or a clear 500 page. */
export function requireConfiguration(env: LoginEnv): void {
  const missing = (
    [
      "OIDC_ISSUER",
      "OIDC_CLIENT_ID",
      "OIDC_CLIENT_SECRET",
      "LOGIN_FLOW_SECRET",
      "LOGIN_PUBLIC_URL",
      "PLATFORM_DOMAIN",
    ] as const
  ).filter((name) => typeof env[name] !== "string" || env[name].length === 0);
  if (missing.length) {
    throw new LoginError(
      500,
      "Sign-in is not configured",
      `The login worker is missing ${missing.join(", ")}. The platform operator sets them (see src/workers/login/wrangler.toml).`,
    );
  }
  if (env.LOGIN_FLOW_SECRET.length < 32) {
    throw new LoginError(500, "Sign-in is not configured", "LOGIN_FLOW_SECRET must be at least 32 characters.");
  }
}

/** The one redirect URI registered at the identity provider: from configuration, never from request headers. */
export function redirectUri(env: LoginEnv): string {
  return `${env.LOGIN_PUBLIC_URL.replace(/\/+$/, "")}/callback`;
}
