/** Bindings of the login worker (see wrangler.toml beside this file and the deploy table in docs/deploying.md). */
export interface LoginEnv {
  /** The platform D1: `projects` (slug, worker secret, private flag) and `project_auth` (domains). Read only. */
  DB: D1Database;
  /** The identity provider's issuer, e.g. `https://accounts.google.com`; discovery is `<issuer>/.well-known/openid-configuration`. */
  OIDC_ISSUER: string;
  /** This platform's client id at the identity provider. */
  OIDC_CLIENT_ID: string;
  /** Secret: the client secret (sent with HTTP Basic to the token endpoint). */
  OIDC_CLIENT_SECRET: string;
  /** Secret: at least 32 characters; the key of the encrypted flow cookie is derived from it. */
  LOGIN_FLOW_SECRET: string;
  /** Where this worker answers, e.g. `https://login.example.app`; the redirect URI is `<this>/callback`. */
  LOGIN_PUBLIC_URL: string;
  /** e.g. `example.app`: public projects live at `https://<slug>.example.app`, private ones at `https://example.app/<slug>`. */
  PLATFORM_DOMAIN: string;
  /**
   * Optional scheme, host and port projects are reached under, for local
   * development: `http://localhost:8787` sends public projects to
   * `http://<slug>.localhost:8787` and private ones to
   * `http://localhost:8787/<slug>`. Default `https://<PLATFORM_DOMAIN>`.
   */
  PROJECTS_BASE_URL?: string;
  /** Tests only: a fake identity provider reached through a binding instead of the network. */
  IDENTITY_PROVIDER?: Fetcher;
}

/** How the worker reaches the identity provider: the test binding when present, else the network. */
export function idpFetch(env: LoginEnv): typeof fetch {
  const binding = env.IDENTITY_PROVIDER;
  return binding ? (input, init) => binding.fetch(input as RequestInfo, init) : (input, init) => fetch(input, init);
}
