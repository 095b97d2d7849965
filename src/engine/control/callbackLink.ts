import { PlatformError } from "../../core/errors.ts";
import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import { checkEventName } from "../execution/continuation.ts";

/** How long a callback URL delivers by default: 7 days (an approval by email waits for a person). */
export const DEFAULT_CALLBACK_LINK_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** At most 30 days: a longer wait is a reminder's job, with a new URL. */
export const MAX_CALLBACK_LINK_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** What a callback URL grants: one delivery of `event` to that run, until `expiresAt` (epoch ms). */
export interface CallbackLinkGrant {
  runId: string;
  event: string;
  expiresAt: number;
}

/** The host's side of `ctx.callbackURL`: signs the grant and answers the URL (the runtime knows the secret and the origin). */
export type CallbackLinkIssuer = (grant: CallbackLinkGrant) => Promise<string>;

let installedIssuer: CallbackLinkIssuer | null = null;

/** The runtime says how callback URLs are signed and where they point (runtime/workflow/callbackLinks.ts). */
export function setCallbackLinkIssuer(issuer: CallbackLinkIssuer | null): void {
  installedIssuer = issuer;
}

/** The issuer a step's `ctx.callbackURL` uses when its host passes none; null: none installed. */
export function installedCallbackLinkIssuer(): CallbackLinkIssuer | null {
  return installedIssuer;
}

/** `ctx.callbackURL(event, options)`'s arguments, checked: the event name as `workflow.send` takes it, and the ttl. */
export function checkCallbackLinkRequest(
  event: unknown,
  options: unknown,
  what: string,
): { event: string; ttlMS: number } {
  const name = checkEventName(event, `${what}: the event name`);
  if (options !== undefined && (typeof options !== "object" || options === null || Array.isArray(options)))
    throw new PlatformError("invalid_input", `${what}: the options must be an object { ttlMS? }`);
  const given = (options ?? {}) as { ttlMS?: unknown };
  refuseUnknownKeys(given, ["ttlMS"], `${what} options`);
  const ttlMS = given.ttlMS ?? DEFAULT_CALLBACK_LINK_TTL_MS;
  if (typeof ttlMS !== "number" || !Number.isSafeInteger(ttlMS) || ttlMS < 1 || ttlMS > MAX_CALLBACK_LINK_TTL_MS)
    throw new PlatformError(
      "invalid_input",
      `${what}: ttlMS must be a whole number of milliseconds from 1 to ${MAX_CALLBACK_LINK_TTL_MS} (30 days), not ${String(ttlMS)}`,
    );
  return { event: name, ttlMS };
}
