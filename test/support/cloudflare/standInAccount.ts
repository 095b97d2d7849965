import type { ScriptStarter } from "#src/dev/cloudflare/scriptStartup.ts";
import {
  type AcceptedScript,
  createScriptUploadStandIn,
  type ScriptUploadStandInOptions,
} from "#src/dev/cloudflare/scriptUploadStandIn.ts";

/** The Cloudflare account the tests deploy to: its API token, account and dispatch namespace. */
export const STAND_IN_ACCOUNT = { apiToken: "cf-token", accountId: "acc123", namespace: "platform-projects" };

/** The stand-in's day, so that compatibility dates are judged against a fixed today. */
export const STAND_IN_NOW = Date.parse("2026-11-20T12:00:00Z");

/**
 * Cloudflare's script-upload API as the local stand-in plays it, for the tests' account: every accepted
 * script is kept in `uploads`, and `fetch` is what a worker's `CLOUDFLARE_API` binding or the upload
 * client calls.
 */
export function standInAccount(
  startScript: ScriptStarter,
  options: Partial<Omit<ScriptUploadStandInOptions, "onAccepted">> = {},
) {
  const uploads: AcceptedScript[] = [];
  const standIn = createScriptUploadStandIn({
    ...STAND_IN_ACCOUNT,
    now: () => STAND_IN_NOW,
    startScript,
    onAccepted: (script) => {
      uploads.push(script);
    },
    ...options,
  });
  const fetch = (input: RequestInfo | URL, init?: RequestInit) => standIn.fetch(new Request(input, init));
  return { standIn, uploads, fetch };
}
