import { PlatformError } from "../../core/errors.ts";
import { randomBase64url } from "../../core/crypto/encoding.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { basePathOf } from "../entry/requestBasePath.ts";
import type { CookieScope } from "./cookies.ts";

/**
 * What sign-in needs to know about the project itself, from its bindings:
 * local or deployed, its id, slug and secret, and the platform's API, where
 * its sessions are recorded (`null` under `platform dev --node`, which has no
 * platform and keeps them in the process; a deployed worker without it can
 * neither sign anybody in nor read a session).
 */
export interface AuthProject {
  /** `PLATFORM_LOCAL === "1"`. */
  local: boolean;
  secret: string;
  projectId: number;
  slug: string;
  platformApi: Fetcher | null;
}

/**
 * Everything sign-in needs to know about where a request landed: the project
 * (above), public or private (`/<slug>` base path), and which sign-in flow
 * applies.
 *
 * Flows: `dummy` (local development: the form stands in for the identity
 * provider) when `PLATFORM_LOCAL` is "1" and no `PLATFORM_LOGIN_URL` is bound;
 * otherwise `idp` (the login worker at `PLATFORM_LOGIN_URL`; deployed, or
 * locally against a local OIDC provider).
 */
export interface AuthSite extends CookieScope, AuthProject {
  /** The request's origin, e.g. `https://shop.example.app`. */
  origin: string;
  flow: "dummy" | "idp";
  /** The login worker's public URL without a trailing slash; `null` when not bound. */
  loginUrl: string | null;
}

const envs = new WeakMap<Request, PlatformEnv>();
let localFallbackSecret: string | null = null;

/** Called by the auth route handler for every request the entry serves, before user code sees it. */
export function rememberEnv(request: Request, env: PlatformEnv): void {
  envs.set(request, env);
}

/** The environment of the request the entry handed to user code (or, for a request user code built itself, the runtime's latest one). */
export function envFor(request: Request | null): PlatformEnv {
  const env = (request && envs.get(request)) ?? platformRuntime.env;
  if (!env) {
    throw new PlatformError(
      "not_ready",
      "auth needs the platform runtime: run the project with `platform dev` or deploy it with `platform push`, and pass auth the request your handler received.",
    );
  }
  return env;
}

export function projectFor(env: PlatformEnv): AuthProject {
  const local = env.PLATFORM_LOCAL === "1";
  let secret = env.PLATFORM_WORKER_SECRET;
  if (!secret) {
    if (!local)
      throw new PlatformError(
        "not_ready",
        "Sign-in is unavailable: this project worker has no PLATFORM_WORKER_SECRET binding.",
      );
    // Local runs without a platform (`platform dev --node`): sessions last until the process restarts.
    localFallbackSecret ??= randomBase64url(32);
    secret = localFallbackSecret;
  }
  const idText = env.PLATFORM_PROJECT_ID;
  let projectId = 0;
  if (idText !== undefined && idText !== "") {
    projectId = Number(idText);
    if (!Number.isSafeInteger(projectId) || projectId < 0)
      throw new PlatformError(
        "not_ready",
        `Sign-in is unavailable: PLATFORM_PROJECT_ID "${idText}" is not a project id.`,
      );
  } else if (!local) {
    throw new PlatformError(
      "not_ready",
      "Sign-in is unavailable: this project worker has no PLATFORM_PROJECT_ID binding.",
    );
  }
  const api = env.PLATFORM_API;
  const platformApi = api && typeof api.fetch === "function" ? api : null;
  return { local, secret, projectId, slug: env.PLATFORM_PROJECT_SLUG || "", platformApi };
}

export function siteFor(request: Request, env: PlatformEnv): AuthSite {
  const project = projectFor(env);
  const basePath = basePathOf(request);
  const loginUrl =
    typeof env.PLATFORM_LOGIN_URL === "string" && env.PLATFORM_LOGIN_URL
      ? env.PLATFORM_LOGIN_URL.replace(/\/+$/, "")
      : null;
  return {
    ...project,
    basePath,
    origin: new URL(request.url).origin,
    flow: project.local && !loginUrl ? "dummy" : "idp",
    loginUrl,
    slug: project.slug || basePath.slice(1) || "project",
  };
}
