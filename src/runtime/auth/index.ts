import { checkEmail } from "../../core/email.ts";
import { PlatformError } from "../../core/errors.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { installAuthCapability } from "./authCapability.ts";
import { setAuthSettings, validateAuthOptions, type AuthOptions } from "./authSettings.ts";
import { envFor, projectFor, siteFor } from "./authSite.ts";
import { userFromSession, userKeyOf, type AuthUser } from "./session.ts";
import { isolateSessions, type SessionCache } from "./sessionCache.ts";
import { sessionRegistryFor } from "./sessionRegistry.ts";
import { signInRequired, type RequireOptions } from "./signInRequired.ts";

/**
 * The sign-in capability. This module is evaluated only when user code
 * imports `auth` from `platform` (the runtime is marked side-effect free, so
 * esbuild drops it otherwise: a project that never uses auth carries none of
 * this code and has no `/api/auth/*` routes). On evaluation, before the first
 * request, it plugs the routes and the build metadata into the worker's runtime.
 */
installAuthCapability(platformRuntime);

export type { AuthOptions } from "./authSettings.ts";
export type { AuthUser } from "./session.ts";
export type { RequireOptions } from "./signInRequired.ts";

/** What `auth.user` accepts: the request a handler received (itty-router, `fetch`), or a Hono context. */
export type AuthRequest = Request | { req: { raw: Request } };

/**
 * `auth.require()`'s middleware: `undefined` lets the route continue, a Response (302 or 401) ends it.
 * @example
 * const signedIn: AuthMiddleware = auth.require({ redirect: false });
 * const denied = await signedIn(request); if (denied) return denied;
 */
export type AuthMiddleware = (request: Request, ...rest: unknown[]) => Promise<Response | undefined>;

const users = new WeakMap<Request, Promise<AuthUser | null>>();

function requestOf(input: AuthRequest): Request {
  if (input instanceof Request) return input;
  const raw = (input as { req?: { raw?: unknown } } | null)?.req?.raw;
  if (raw instanceof Request) return raw;
  throw new PlatformError(
    "invalid_input",
    "auth.user() takes the request your handler received (with Hono: the context, or c.req.raw).",
  );
}

/** The signed-in user of `request` (read once per request), or `null`. */
function currentUser(input: AuthRequest): Promise<AuthUser | null> {
  const request = requestOf(input);
  let user = users.get(request);
  if (!user) {
    user = userFromSession(request, siteFor(request, envFor(request)));
    users.set(request, user);
  }
  return user;
}

/**
 * Sign-in for the project: `auth.allow` (rules, top level), `auth.require()` (middleware), `auth.user(request)`.
 * @example
 * auth.allow({ domains: ["example.com"] });
 * router.all("/api/*", auth.require());
 * router.get("/me", async (req) => Response.json(await auth.user(req)));
 */
export const auth = {
  /**
   * Enables sign-in and sets its rules; call once, at top level.
   * `domains`: email domains allowed to sign in (default: every account).
   * `sessionMaxAge`: session lifetime in seconds (default 2,592,000 = 30 days; at most 400 days).
   * Throws a PlatformError (`invalid_input`) on bad options.
   * @example
   * auth.allow({ domains: ["example.com"], sessionMaxAge: 3600 });
   */
  allow(options?: AuthOptions): void {
    setAuthSettings(validateAuthOptions(options));
  },

  /**
   * Middleware that lets the route continue (returns nothing) when somebody is
   * signed in. Otherwise a browser navigation (GET or HEAD with `Accept:
   * text/html`) is redirected (302) to `/api/auth/signin/idp?redirect=<path>`,
   * and every other request gets 401 JSON
   * (`{ error: { code: "unauthorized", message: "Sign in required: <sign-in URL>" } }`).
   * `{ redirect: false }`: always the 401 JSON.
   *
   * @example
   * // itty-router
   * router.all("/api/*", auth.require());
   * // Hono
   * app.use("/api/*", async (c, next) => { const r = await auth.require()(c.req.raw); if (r) return r; await next(); });
   * // plain fetch
   * const denied = await auth.require()(request); if (denied) return denied;
   */
  require(options?: RequireOptions): AuthMiddleware {
    const answer: RequireOptions = { redirect: options?.redirect !== false };
    return async (request) => ((await currentUser(request)) ? undefined : signInRequired(request, answer));
  },

  /**
   * `{ email, name, picture? }` of the signed-in user, or `null`. Pass the request your handler received.
   * @example
   * router.get("/me", async (req) => Response.json(await auth.user(req)));
   */
  user(request: AuthRequest): Promise<AuthUser | null> {
    try {
      return currentUser(request);
    } catch (error) {
      return Promise.reject(error);
    }
  },

  /**
   * Ends every session of a user in this project, in every browser:
   * given the request your handler received, the user signed in
   * on it; given an address, that user. Resolves with how many sessions
   * ended (0 when nobody is signed in on the request). Takes effect at once
   * in this isolate and within 30 seconds everywhere else; the browser that
   * asked keeps its (now ended) cookie until it signs out or in again.
   * Rejects with `not_ready` when the platform cannot be reached (nothing
   * ended), `invalid_input` for an address that is not one. A cookie whose
   * session already ended (a copy kept after sign-out) ends nothing.
   * @example
   * router.post("/api/sign-out-everywhere", auth.require(), async (req) =>
   *   Response.json({ ended: await auth.signOutEverywhere(req) }));
   */
  async signOutEverywhere(target: AuthRequest | string): Promise<number> {
    let email: string;
    let env: PlatformEnv;
    if (typeof target === "string") {
      const check = checkEmail(target, null);
      if (!check.ok)
        throw new PlatformError(
          "invalid_input",
          `auth.signOutEverywhere(): ${JSON.stringify(target)} is not an email address; pass the request your handler received, or the user's address.`,
        );
      email = check.email;
      env = envFor(null);
    } else {
      const request = requestOf(target);
      env = envFor(request);
      // Only a session the platform still holds may end the others; one it cannot vouch for now is an error, not nobody.
      const user = await userFromSession(request, siteFor(request, env), { unverifiable: "throw" });
      if (!user) return 0;
      email = user.email;
    }
    const ended = await sessionRegistryFor(projectFor(env)).endUser(await userKeyOf(email));
    isolateSessions.endUser(email, Date.now());
    return ended;
  },
};

/**
 * For benchmarks and tests: what `auth.user()` does, without the per-request
 * cache, for a request and environment given explicitly (`nowMS` overrides
 * the clock; `isolate` stands for another isolate's session cache).
 */
export async function readSessionUser(
  request: Request,
  env: PlatformEnv,
  nowMS = Date.now(),
  isolate: SessionCache = isolateSessions,
): Promise<AuthUser | null> {
  return userFromSession(request, siteFor(request, env), { nowMS, cache: isolate });
}
