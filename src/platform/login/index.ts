import { Router, type IRequest } from "itty-router";
import { finishSignIn } from "./callbackRoute.ts";
import type { LoginEnv } from "./env.ts";
import { errorPage, LoginError } from "./pages.ts";
import { startSignIn } from "./startRoute.ts";

/**
 * The login worker: the platform's one OAuth 2.0 / OpenID Connect client of
 * the identity provider. Projects send browsers to `/start`; the provider
 * sends them back to `/callback`; the worker hands the project a callback
 * token signed with the project's worker secret (src/core/callbackToken.ts).
 */
const router = Router<IRequest, [LoginEnv, ExecutionContext]>({
  catch: (error) => {
    if (error instanceof LoginError) return errorPage(error);
    console.error("login: unhandled error", error);
    return errorPage(new LoginError(500, "Sign-in failed", "Something went wrong on the platform's side. Start the sign-in again from the project."));
  },
});

router
  .get("/start", (request, env) => startSignIn(request as unknown as Request, env))
  .get("/callback", (request, env) => finishSignIn(request as unknown as Request, env))
  .get("/health", () => Response.json({ ok: true }))
  .all("*", (request) => errorPage(new LoginError(404, "Not found", `The login service has nothing at ${new URL(request.url).pathname}.`)));

export default {
  fetch: (request: Request, env: LoginEnv, ctx: ExecutionContext) => router.fetch(request, env, ctx),
} satisfies ExportedHandler<LoginEnv>;
