import { parseRunCallbackRoutePath, runCallbackRoutePath } from "../../contracts/runCallbackRoute.ts";
import { randomBase64url } from "../../core/crypto/encoding.ts";
import { PlatformError } from "../../core/errors.ts";
import { signRunCallbackToken, verifyRunCallbackToken } from "../../core/runCallbackToken.ts";
import type { CallbackLinkIssuer } from "../../engine/control/callbackLink.ts";
import { TEST_ORIGIN } from "./testOrigin.ts";

/** The test kit's worker secret: callback URLs its runs make verify only in this process, as a project's only with its own. */
const TEST_CALLBACK_SECRET = randomBase64url(32);

/** `ctx.callbackURL` in a run the kit drives: a URL on {@link TEST_ORIGIN}, signed as the platform signs one. */
export const testCallbackLinks: CallbackLinkIssuer = async ({ runId, event, expiresAt }) =>
  TEST_ORIGIN +
  runCallbackRoutePath(
    runId,
    await signRunCallbackToken(TEST_CALLBACK_SECRET, { run: runId, evt: event, exp: expiresAt }),
  );

/** What a callback URL delivers, checked as the platform's route checks it (callbackRoute.ts) at the run's virtual `now`. */
export interface TestCallback {
  runId: string;
  event: string;
  callbackId: string;
}

/**
 * `run.callback(url, body)`'s URL, checked: `unauthorized` for one altered or
 * not made by a run of the kit, `gone` once it has expired.
 */
export async function readTestCallback(url: string, now: number): Promise<TestCallback> {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    throw new PlatformError(
      "invalid_input",
      `run.callback needs the URL ctx.callbackURL answered, not ${JSON.stringify(url)}`,
    );
  }
  const route = parseRunCallbackRoutePath(pathname);
  const refused = new PlatformError(
    "unauthorized",
    "This callback URL is not valid: it was altered or is for another run.",
  );
  if (!route) throw refused;
  const check = await verifyRunCallbackToken(route.token, TEST_CALLBACK_SECRET, route.runId, now);
  if (!check.ok) {
    if (check.reason === "expired")
      throw new PlatformError("gone", "This callback URL has expired; ask for a new one.");
    throw refused;
  }
  return { runId: route.runId, event: check.claims.evt, callbackId: check.claims.jti };
}
