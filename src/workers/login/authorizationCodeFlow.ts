import type { JWTPayload } from "jose";
import { redirectUri } from "./config.ts";
import type { LoginEnv } from "./env.ts";
import { discoverProvider, type ProviderMetadata } from "./identityProvider.ts";
import { verifyIdToken } from "./idToken.ts";
import { type LoginError, redirect } from "./pages.ts";
import { codeChallengeS256, randomToken } from "./pkce.ts";
import { exchangeCode } from "./tokenExchange.ts";

/**
 * The OIDC authorization code flow with PKCE that a project's sign-in and a
 * `platform login` both run against the one identity provider: the request
 * that sends the browser there, and the redemption of the code it brings back.
 * Each caller keeps the secrets in its own sealed flow cookie.
 */
export interface AuthorizationSecrets {
  /** OAuth `state`: ties the provider's answer to this browser's flow. */
  state: string;
  /** OIDC `nonce`: ties the ID token to this flow. */
  nonce: string;
  /** PKCE code verifier: only this flow can redeem the code. */
  verifier: string;
}

/**
 * Fresh secrets, sealed by `sealFlow` into the caller's flow cookie, and a
 * redirect to the provider's authorization endpoint that sets that cookie.
 */
export async function redirectToProvider(
  env: LoginEnv,
  sealFlow: (secrets: AuthorizationSecrets) => Promise<string>,
): Promise<Response> {
  const metadata = await discoverProvider(env);
  const secrets = { state: randomToken(), nonce: randomToken(), verifier: randomToken() };
  const cookie = await sealFlow(secrets);
  const authorize = new URL(metadata.authorization_endpoint);
  authorize.searchParams.set("response_type", "code");
  authorize.searchParams.set("client_id", env.OIDC_CLIENT_ID);
  authorize.searchParams.set("redirect_uri", redirectUri(env));
  authorize.searchParams.set("scope", "openid email profile");
  authorize.searchParams.set("state", secrets.state);
  authorize.searchParams.set("nonce", secrets.nonce);
  authorize.searchParams.set("code_challenge", await codeChallengeS256(secrets.verifier));
  authorize.searchParams.set("code_challenge_method", "S256");
  return redirect(authorize.toString(), [cookie]);
}

/** The provider's answer `url` to the flow that `flow`'s secrets started, and how the caller refuses a bad one. */
export interface ProviderAnswer {
  url: URL;
  flow: Pick<AuthorizationSecrets, "nonce" | "verifier">;
  refuse: (message: string) => LoginError;
}

/**
 * Redeems the single `code` of the provider's answer `url` with the flow's
 * PKCE verifier and verifies the ID token against the flow's nonce. A missing,
 * repeated or oversized code is refused with `refuse`, the caller's own error.
 */
export async function redeemAuthorizationCode(
  env: LoginEnv,
  metadata: ProviderMetadata,
  { url, flow, refuse }: ProviderAnswer,
): Promise<{ claims: JWTPayload; accessToken: string | undefined }> {
  const code = url.searchParams.getAll("code");
  if (code.length !== 1 || code[0]!.length === 0 || code[0]!.length > 2048)
    throw refuse("The identity provider's answer has no authorization code.");
  const tokens = await exchangeCode(env, metadata, {
    code: code[0]!,
    verifier: flow.verifier,
    redirectUri: redirectUri(env),
  });
  const claims = await verifyIdToken(env, metadata, { idToken: tokens.id_token, expectedNonce: flow.nonce });
  return { claims, accessToken: tokens.access_token };
}
