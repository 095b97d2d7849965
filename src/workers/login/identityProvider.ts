import type { JSONWebKeySet } from "jose";
import { idpFetch, type LoginEnv } from "./env.ts";
import { LoginError } from "./pages.ts";

/**
 * The identity provider as OpenID Connect Discovery describes it. The
 * discovery document and the key set are cached per isolate (plain data
 * only, never a promise or a response shared between requests).
 */
export interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  userinfo_endpoint?: string;
  id_token_signing_alg_values_supported?: string[];
  code_challenge_methods_supported?: string[];
}

const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const JWKS_TTL_MS = 60 * 60 * 1000;
/** A key set is fetched again for an unknown `kid` at most this often. */
const JWKS_REFETCH_COOLDOWN_MS = 30 * 1000;
const FETCH_TIMEOUT_MS = 10_000;

const discoveryCache = new Map<string, { metadata: ProviderMetadata; fetchedAt: number }>();
const jwksCache = new Map<string, { jwks: JSONWebKeySet; fetchedAt: number; refreshedAt: number | null }>();

/** Tests only: forget what this isolate learnt about identity providers. */
export function resetIdentityProviderCache(): void {
  discoveryCache.clear();
  jwksCache.clear();
}

function unavailable(detail: string): LoginError {
  return new LoginError(
    502,
    "The identity provider is unavailable",
    `Sign-in cannot continue right now: ${detail} Try again in a moment.`,
  );
}

async function getJson(env: LoginEnv, url: string, what: string): Promise<unknown> {
  let response: Response;
  try {
    response = await idpFetch(env)(url, {
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    console.error(`login: ${what} at ${url} could not be fetched:`, error);
    throw unavailable(`its ${what} could not be reached.`);
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw unavailable(`its ${what} answered with status ${response.status}.`);
  }
  try {
    return await response.json();
  } catch {
    throw unavailable(`its ${what} is not JSON.`);
  }
}

function endpointOk(value: unknown, issuer: string): value is string {
  if (typeof value !== "string") return false;
  try {
    const url = new URL(value);
    // An https issuer only ever points at https endpoints; http is for loopback development.
    return url.protocol === "https:" || (url.protocol === "http:" && !issuer.startsWith("https:"));
  } catch {
    return false;
  }
}

/** `<OIDC_ISSUER>/.well-known/openid-configuration`, checked: its `issuer` must be exactly the configured one. */
export async function discoverProvider(env: LoginEnv, nowMS = Date.now()): Promise<ProviderMetadata> {
  const issuer = env.OIDC_ISSUER;
  const cached = discoveryCache.get(issuer);
  if (cached && nowMS - cached.fetchedAt < DISCOVERY_TTL_MS) return cached.metadata;
  const url = `${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
  const doc = (await getJson(env, url, "discovery document")) as Record<string, unknown> | null;
  if (!doc || typeof doc !== "object") throw unavailable("its discovery document is not an object.");
  if (doc.issuer !== issuer)
    throw unavailable(`its discovery document names issuer "${String(doc.issuer)}", not the configured "${issuer}".`);
  for (const field of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const) {
    if (!endpointOk(doc[field], issuer)) throw unavailable(`its discovery document has no usable ${field}.`);
  }
  if (doc.userinfo_endpoint !== undefined && !endpointOk(doc.userinfo_endpoint, issuer)) {
    throw unavailable("its discovery document has an unusable userinfo_endpoint.");
  }
  const methods = doc.code_challenge_methods_supported;
  if (Array.isArray(methods) && !methods.includes("S256")) throw unavailable("it does not support PKCE with S256.");
  const metadata = doc as unknown as ProviderMetadata;
  discoveryCache.set(issuer, { metadata, fetchedAt: nowMS });
  return metadata;
}

/**
 * The provider's signing keys. `refresh` asks for a fresh copy (a token
 * signed with a key id we do not know: the provider may have rotated its
 * keys); such refetches happen at most once per cooldown, so tokens with
 * made-up key ids cannot make us hammer the provider.
 */
export async function providerKeys(
  env: LoginEnv,
  metadata: ProviderMetadata,
  refresh = false,
  nowMS = Date.now(),
): Promise<JSONWebKeySet> {
  const cached = jwksCache.get(metadata.jwks_uri);
  if (cached) {
    if (!refresh && nowMS - cached.fetchedAt < JWKS_TTL_MS) return cached.jwks;
    if (refresh && cached.refreshedAt !== null && nowMS - cached.refreshedAt < JWKS_REFETCH_COOLDOWN_MS)
      return cached.jwks;
  }
  const jwks = (await getJson(env, metadata.jwks_uri, "key set")) as JSONWebKeySet | null;
  if (!jwks || !Array.isArray(jwks.keys)) throw unavailable("its key set has no keys.");
  jwksCache.set(metadata.jwks_uri, {
    jwks,
    fetchedAt: nowMS,
    refreshedAt: refresh ? nowMS : (cached?.refreshedAt ?? null),
  });
  return jwks;
}
