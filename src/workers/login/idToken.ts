import { createLocalJWKSet, errors, jwtVerify, type JWTPayload } from "jose";
import type { LoginEnv } from "./env.ts";
import { providerKeys, type ProviderMetadata } from "./identityProvider.ts";
import { LoginError } from "./pages.ts";
import { timingSafeEqual } from "../../core/crypto/signed.ts";

/** Clock skew tolerated on `exp`, `iat` and `nbf`. */
export const ID_TOKEN_CLOCK_SKEW_SECONDS = 60;
/** An ID token is fresh from the token endpoint: older than this is refused. */
export const ID_TOKEN_MAX_AGE_SECONDS = 600;

/** Asymmetric algorithms only: `none` and HMAC (keyed with the client secret) are never accepted. */
const ASYMMETRIC = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];

function refused(reason: string): LoginError {
  return new LoginError(
    502,
    "Sign-in failed",
    `The identity provider's ID token was refused: ${reason}. Nothing was signed in; start again from the project.`,
  );
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "it has expired";
  if (error instanceof errors.JWTClaimValidationFailed) return `its "${error.claim}" claim is wrong (${error.reason})`;
  if (error instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify";
  if (error instanceof errors.JWKSNoMatchingKey) return "it is signed with a key the provider does not publish";
  if (error instanceof errors.JOSEAlgNotAllowed) return "it uses a signing algorithm that is not allowed";
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return "it is malformed";
  return "it could not be verified";
}

/**
 * OpenID Connect Core §3.1.3.7: signature against the provider's published
 * keys, `iss` exactly the discovered issuer, `aud` containing our client id
 * (and `azp` equal to it when present or when there are several audiences),
 * `exp`/`iat` with a small skew, and `nonce` equal to the flow's.
 */
export async function verifyIdToken(
  env: LoginEnv,
  metadata: ProviderMetadata,
  { idToken, expectedNonce }: { idToken: string; expectedNonce: string },
  nowMS = Date.now(),
): Promise<JWTPayload> {
  const advertised = metadata.id_token_signing_alg_values_supported ?? ["RS256"];
  const algorithms = ASYMMETRIC.filter((alg) => advertised.includes(alg));
  if (algorithms.length === 0) throw refused("the provider signs ID tokens with no algorithm this platform accepts");
  const options = {
    issuer: metadata.issuer,
    audience: env.OIDC_CLIENT_ID,
    algorithms,
    clockTolerance: ID_TOKEN_CLOCK_SKEW_SECONDS,
    maxTokenAge: ID_TOKEN_MAX_AGE_SECONDS,
    currentDate: new Date(nowMS),
    requiredClaims: ["sub", "exp", "iat", "nonce"],
  };
  let payload: JWTPayload;
  try {
    payload = (await jwtVerify(idToken, createLocalJWKSet(await providerKeys(env, metadata, false, nowMS)), options))
      .payload;
  } catch (error) {
    if (!(error instanceof errors.JWKSNoMatchingKey)) throw refused(describe(error));
    // The provider may have rotated its keys since we cached them.
    try {
      payload = (await jwtVerify(idToken, createLocalJWKSet(await providerKeys(env, metadata, true, nowMS)), options))
        .payload;
    } catch (again) {
      if (again instanceof LoginError) throw again;
      throw refused(describe(again));
    }
  }
  const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
  if ((audiences.length > 1 || payload.azp !== undefined) && payload.azp !== env.OIDC_CLIENT_ID) {
    throw refused('its "azp" claim is not this platform');
  }
  if (typeof payload.nonce !== "string" || !timingSafeEqual(payload.nonce, expectedNonce)) {
    throw refused("its nonce does not belong to this sign-in");
  }
  if (typeof payload.sub !== "string" || payload.sub.length === 0) throw refused('it has no "sub"');
  return payload;
}
