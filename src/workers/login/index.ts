import { createPlatformRouter } from "../../core/web/router.ts";
import { answerCliSignIn, routeCallback, startCliSignIn } from "./cliSignInRoutes.ts";
import type { LoginEnv } from "./env.ts";
import { errorPage, LoginError } from "./pages.ts";
import { startSignIn } from "./startRoute.ts";

/**
 * The login worker: the platform's one OAuth 2.0 / OpenID Connect client of
 * the identity provider. Projects send browsers to `/start`; the provider
 * sends them back to `/callback`; the worker hands the project a callback
 * token signed with the project's worker secret (src/core/callbackToken.ts).
 * People see its answers, so every error is a page, never JSON.
 */
const router = createPlatformRouter<LoginEnv>("login", {
  isExpected: (error) => error instanceof LoginError,
  errorResponse: (error) =>
    errorPage(
      error instanceof LoginError
        ? error
        : new LoginError(
            500,
            "Sign-in failed",
            "Something went wrong on the platform's side. Start the sign-in again from the project.",
          ),
    ),
  missing: (request) =>
    errorPage(new LoginError(404, "Not found", `The login service has nothing at ${new URL(request.url).pathname}.`)),
})
  .get("/start", startSignIn)
  .get("/callback", routeCallback)
  .get("/cli", startCliSignIn)
  .post("/cli/approve", answerCliSignIn)
  .get("/health", () => Response.json({ ok: true }));

export default {
  fetch: router.fetch,
} satisfies ExportedHandler<LoginEnv>;
