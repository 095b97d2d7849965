import { verifySignInStart } from "../../core/callbackToken.ts";
import { isSafeRedirectPath } from "../../core/web/redirectPath.ts";
import { redirectToProvider } from "./authorizationCodeFlow.ts";
import { requireConfiguration } from "./config.ts";
import type { LoginEnv } from "./env.ts";
import { FLOW_LIFETIME_SECONDS, sealFlowCookie } from "./flowCookie.ts";
import { LoginError } from "./pages.ts";
import { findSignInProject, SLUG } from "./signInProject.ts";

const BINDING = /^[A-Za-z0-9_-]{43}$/;

function broken(message: string): LoginError {
  return new LoginError(
    400,
    "This sign-in link is not valid",
    `${message} Go back to the project and use its sign-in button.`,
  );
}

/** The single value of a query parameter; a repeated one is refused rather than guessed at. */
function single(url: URL, name: string): string | null {
  const values = url.searchParams.getAll(name);
  return values.length === 1 ? values[0]! : null;
}

/**
 * `GET /start?project=<slug>&redirect=<path>&bind=<hash>&exp=<unix s>&sig=<hmac>`:
 * a project sends the browser here to sign in. The project's signature over
 * all of it (src/core/callbackToken.ts) proves the project chose `bind` for a
 * browser of its own: a neighbour cannot start a sign-in for it with a binding
 * value the neighbour holds. Checks everything, seals the flow (state,
 * nonce, PKCE verifier, project, path, binding) into the flow cookie and sends
 * the browser to the identity provider's authorization endpoint.
 */
export async function startSignIn(request: Request, env: LoginEnv): Promise<Response> {
  requireConfiguration(env);
  const url = new URL(request.url);
  const slug = single(url, "project");
  if (!slug || !SLUG.test(slug)) throw broken("It does not name a project.");
  const path = single(url, "redirect");
  if (!isSafeRedirectPath(path))
    throw broken('Its return address is not a path inside the project (it must start with a single "/").');
  const bind = single(url, "bind");
  if (!bind || !BINDING.test(bind)) throw broken("Its browser binding is missing or malformed.");
  const project = await findSignInProject(env.DB, slug);
  if (!project) throw new LoginError(404, "No such project", `There is no project named "${slug}" on this platform.`);
  const signed = await verifySignInStart(project.workerSecret, project.id, {
    slug,
    redirect: path,
    bind,
    exp: single(url, "exp"),
    sig: single(url, "sig"),
  });
  if (signed === "expired") throw broken("It is more than 10 minutes old.");
  if (signed !== "ok")
    throw broken(
      `It was not issued by ${slug} for this browser (its signature is missing or does not verify), so no sign-in was started.`,
    );

  const exp = Math.floor(Date.now() / 1000) + FLOW_LIFETIME_SECONDS;
  return redirectToProvider(env, (secrets) =>
    sealFlowCookie(env.LOGIN_FLOW_SECRET, env.LOGIN_PUBLIC_URL, { ...secrets, slug, redirect: path, bind, exp }),
  );
}
