import { basicAuthorization } from "../../core/web/basicAuthorization.ts";
import { idpFetch, type LoginEnv } from "./env.ts";
import type { ProviderMetadata } from "./identityProvider.ts";
import { LoginError } from "./pages.ts";

export interface TokenResponse {
  id_token: string;
  access_token?: string;
}

const FETCH_TIMEOUT_MS = 10_000;

/** Exchanges the authorization code at the token endpoint (client_secret_basic, PKCE verifier). */
export async function exchangeCode(
  env: LoginEnv,
  metadata: ProviderMetadata,
  input: { code: string; verifier: string; redirectUri: string },
): Promise<TokenResponse> {
  const body = new URLSearchParams({
    grant_type: "authorization_code",
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.verifier,
  });
  let response: Response;
  try {
    response = await idpFetch(env)(metadata.token_endpoint, {
      method: "POST",
      headers: {
        authorization: basicAuthorization(env.OIDC_CLIENT_ID, env.OIDC_CLIENT_SECRET),
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    console.error("login: token endpoint unreachable:", error);
    throw new LoginError(
      502,
      "The identity provider is unavailable",
      "Its token endpoint could not be reached. Start the sign-in again in a moment.",
    );
  }
  const json = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (response.status >= 400 && response.status < 500) {
    const code = typeof json?.error === "string" ? json.error.slice(0, 100) : `status ${response.status}`;
    throw new LoginError(
      400,
      "Sign-in failed",
      `The identity provider refused the authorization code (${code}). Codes work once and only for a few minutes: start the sign-in again from the project.`,
    );
  }
  if (!response.ok || !json) {
    throw new LoginError(
      502,
      "The identity provider is unavailable",
      `Its token endpoint answered with status ${response.status}. Start the sign-in again in a moment.`,
    );
  }
  if (typeof json.id_token !== "string" || json.id_token.length === 0) {
    throw new LoginError(
      502,
      "Sign-in failed",
      "The identity provider answered without an ID token (was the openid scope granted?).",
    );
  }
  return {
    id_token: json.id_token,
    access_token: typeof json.access_token === "string" ? json.access_token : undefined,
  };
}
