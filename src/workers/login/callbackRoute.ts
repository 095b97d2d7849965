import { signCallbackToken } from "../../core/callbackToken.ts";
import { redeemAuthorizationCode } from "./authorizationCodeFlow.ts";
import { requireConfiguration } from "./config.ts";
import type { LoginEnv } from "./env.ts";
import { clearFlowCookie, openFlowCookie } from "./flowCookie.ts";
import { discoverProvider } from "./identityProvider.ts";
import { callbackFormPage, errorPage, LoginError, redirect } from "./pages.ts";
import { timingSafeEqual } from "../../core/crypto/signed.ts";
import { projectBaseUrl, projectCallbackUrl, projectPageUrl } from "./projectUrls.ts";
import { signedInUser } from "./signedInUser.ts";
import { findSignInProject } from "./signInProject.ts";

const FLOW_FAILURES = {
  missing:
    "This browser has no sign-in in progress here: it was started in another browser or tab that finished already, it was started more than 10 minutes ago, or cookies are blocked for this site.",
  expired: "This sign-in was started more than 10 minutes ago.",
  invalid: "This browser's sign-in state is damaged or was not issued by this platform.",
} as const;

function startAgain(message: string): LoginError {
  return new LoginError(
    400,
    "Sign-in could not be completed",
    `${message} Nothing was signed in; start again from the project.`,
  );
}

/**
 * `GET /callback?code&state` (the identity provider's redirect): checks the
 * flow cookie and `state`, exchanges the code with the PKCE verifier, verifies
 * the ID token and the project's rules, then answers with a page that POSTs
 * a callback token signed with the project's worker secret to the project's
 * `/api/auth/callback` (in the body: never in a URL). The flow cookie is cleared whatever happens; any
 * refusal is a page and mints nothing.
 */
export async function finishSignIn(request: Request, env: LoginEnv): Promise<Response> {
  const clear = clearFlowCookie(env.LOGIN_PUBLIC_URL ?? "");
  try {
    return await finish(request, env, clear);
  } catch (error) {
    if (error instanceof LoginError) return errorPage(error, { "Set-Cookie": clear });
    throw error;
  }
}

async function finish(request: Request, env: LoginEnv, clear: string): Promise<Response> {
  requireConfiguration(env);
  const url = new URL(request.url);
  const opened = await openFlowCookie(request, env.LOGIN_FLOW_SECRET, env.LOGIN_PUBLIC_URL);
  if (!opened.ok) throw startAgain(FLOW_FAILURES[opened.reason]);
  const { flow } = opened;
  const state = url.searchParams.getAll("state");
  if (state.length !== 1 || !timingSafeEqual(state[0]!, flow.state)) {
    throw startAgain(
      "The identity provider's answer does not belong to the sign-in this browser started (state mismatch; was another sign-in started in this browser since?).",
    );
  }
  const metadata = await discoverProvider(env);
  // RFC 9207: when the provider names itself in the response, it must be our issuer (mix-up defence).
  const iss = url.searchParams.get("iss");
  if (iss !== null && iss !== metadata.issuer)
    throw startAgain("The answer comes from another identity provider than the one this sign-in went to.");

  const project = await findSignInProject(env.DB, flow.slug);
  if (!project) throw new LoginError(404, "No such project", `The project "${flow.slug}" no longer exists.`);
  const backLink = { href: projectBaseUrl(env, project) + "/", text: `Back to ${project.slug}` };

  const providerError = url.searchParams.get("error");
  if (providerError !== null) {
    if (providerError === "access_denied") {
      // The person said no at the provider: back to the page they came from, as the local form's Cancel does.
      return redirect(projectPageUrl(env, project, flow.redirect, { auth_error: "cancelled" }), [clear]);
    }
    throw new LoginError(
      400,
      "Sign-in failed",
      `The identity provider reported "${providerError.slice(0, 100)}". Nothing was signed in.`,
      backLink,
    );
  }
  const { claims, accessToken } = await redeemAuthorizationCode(env, metadata, { url, flow, refuse: startAgain });
  const user = await signedInUser(env, metadata, project, { idClaims: claims, accessToken, backLink });

  const token = await signCallbackToken(project.workerSecret, {
    pid: project.id,
    email: user.email,
    name: user.name,
    ...(user.picture ? { picture: user.picture } : {}),
    bnd: flow.bind,
    rdr: flow.redirect,
  });
  return callbackFormPage(projectCallbackUrl(env, project), token, project.slug, [clear]);
}
