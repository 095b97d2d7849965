import type { JWTPayload } from "jose";
import type { SignedInUser } from "../../core/callbackToken.ts";
import { checkEmail } from "../../core/email.ts";
import { idpFetch, type LoginEnv } from "./env.ts";
import type { ProviderMetadata } from "./identityProvider.ts";
import { LoginError } from "./pages.ts";
import type { SignInProject } from "./signInProject.ts";

const MAX_NAME = 200;
const MAX_PICTURE = 2048;

/**
 * Providers that follow OIDC Core to the letter put scope-requested claims
 * only in the userinfo response; fetch them there when the ID token has no
 * email. The userinfo `sub` must be the ID token's.
 */
async function claimsWithUserinfo(
  env: LoginEnv,
  metadata: ProviderMetadata,
  idClaims: JWTPayload,
  accessToken: string | undefined,
): Promise<Record<string, unknown>> {
  if (idClaims.email !== undefined || !metadata.userinfo_endpoint || !accessToken) return idClaims;
  let response: Response;
  try {
    response = await idpFetch(env)(metadata.userinfo_endpoint, {
      headers: { authorization: `Bearer ${accessToken}`, accept: "application/json" },
      signal: AbortSignal.timeout(10_000),
    });
  } catch {
    throw new LoginError(
      502,
      "The identity provider is unavailable",
      "Its userinfo endpoint could not be reached. Start the sign-in again in a moment.",
    );
  }
  const info = (await response.json().catch(() => null)) as Record<string, unknown> | null;
  if (!response.ok || !info)
    throw new LoginError(
      502,
      "Sign-in failed",
      `The identity provider's userinfo endpoint answered with status ${response.status}.`,
    );
  if (info.sub !== idClaims.sub)
    throw new LoginError(
      502,
      "Sign-in failed",
      "The identity provider's userinfo answer is about another account than its ID token.",
    );
  return {
    ...idClaims,
    email: info.email,
    email_verified: info.email_verified,
    name: idClaims.name ?? info.name,
    picture: idClaims.picture ?? info.picture,
  };
}

function pictureOf(value: unknown): string | undefined {
  if (typeof value !== "string" || value.length > MAX_PICTURE) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === "https:" || url.protocol === "http:" ? url.toString() : undefined;
  } catch {
    return undefined;
  }
}

/** What the provider vouched for (the ID token's claims, its access token) and where a refusal page links back to. */
export interface VerifiedSignIn {
  idClaims: JWTPayload;
  accessToken: string | undefined;
  backLink: { href: string; text: string };
}

/**
 * Who signed in, as the project will see them, after the checks that are
 * the platform's to make: a verified email (`email_verified === true`, the
 * boolean, nothing else) in one of the project's domains.
 */
export async function signedInUser(
  env: LoginEnv,
  metadata: ProviderMetadata,
  project: SignInProject,
  { idClaims, accessToken, backLink }: VerifiedSignIn,
): Promise<SignedInUser> {
  const claims = await claimsWithUserinfo(env, metadata, idClaims, accessToken);
  const parsed = checkEmail(claims.email, project.domains);
  if (!parsed.ok && parsed.reason === "malformed") {
    throw new LoginError(
      403,
      "Sign-in refused",
      "The identity provider did not give a usable email address for this account.",
      backLink,
    );
  }
  if (claims.email_verified !== true) {
    throw new LoginError(
      403,
      "Sign-in refused",
      `The identity provider has not verified ${parsed.email}. Verify the address with the provider, then sign in again.`,
      backLink,
    );
  }
  if (!parsed.ok) {
    const rule = project.domains!.length
      ? `it accepts accounts from ${project.domains!.join(", ")} only`
      : "it accepts no accounts";
    throw new LoginError(
      403,
      "Sign-in refused",
      `${parsed.email} may not sign in to ${project.slug}: ${rule}.`,
      backLink,
    );
  }
  const name =
    typeof claims.name === "string" && claims.name.trim() ? claims.name.trim().slice(0, MAX_NAME) : parsed.local;
  const picture = pictureOf(claims.picture);
  return { email: parsed.email, name, ...(picture ? { picture } : {}) };
}
