import { verifySignInStart } from "../../core/callbackToken.ts";
import { isSafeRedirectPath } from "../../core/web/redirectPath.ts";
import { requireConfiguration, redirectUri } from "./config.ts";
import type { LoginEnv } from "./env.ts";
import { FLOW_LIFETIME_SECONDS, sealFlowCookie } from "./flowCookie.ts";
import { discoverProvider } from "./identityProvider.ts";
import { LoginError, redirect } from "./pages.ts";
import { codeChallengeS256, randomToken } from "./pkce.ts";
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

  const metadata = await discoverProvider(env);
  const state = randomToken();
  const nonce = randomToken();
  const verifier = randomToken();
  const exp = Math.floor(Date.now() / 1000) + FLOW_LIFETIME_SECONDS;
  const cookie = await sealFlowCookie(env.LOGIN_FLOW_SECRET, env.LOGIN_PUBLIC_URL, {
    state,
    nonce,
    verifier,
    slug,
    redirect: path,
    bind,
    exp,
  });

  const authorize = new URL(metadata.authorization_endpoint);
  authorize.searchParams.set("response_type", "code");
  authorize.searchParams.set("client_id", env.OIDC_CLIENT_ID);
  authorize.searchParams.set("redirect_uri", redirectUri(env));
  authorize.searchParams.set("scope", "openid email profile");
  authorize.searchParams.set("state", state);
  authorize.searchParams.set("nonce", nonce);
  authorize.searchParams.set("code_challenge", await codeChallengeS256(verifier));
  authorize.searchParams.set("code_challenge_method", "S256");
  return redirect(authorize.toString(), [cookie]);
}
