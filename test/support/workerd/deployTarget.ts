import { env } from "cloudflare:test";
import type { ScriptUploadStandInOptions } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { STAND_IN_ACCOUNT, standInAccount } from "#test/support/cloudflare/standInAccount.ts";
import { startThroughPool } from "./scriptStarter.ts";

/**
 * The stand-in Cloudflare account inside workerd, and the API worker's env (`base` plus the account's
 * settings) whose pushes upload to it.
 */
export function deployTarget(
  options: Partial<Omit<ScriptUploadStandInOptions, "onAccepted">> = {},
  base: object = env,
) {
  const account = standInAccount(startThroughPool, options);
  return {
    ...account,
    env: {
      ...base,
      CLOUDFLARE_ACCOUNT_ID: STAND_IN_ACCOUNT.accountId,
      DISPATCH_NAMESPACE: STAND_IN_ACCOUNT.namespace,
      CLOUDFLARE_API_TOKEN: STAND_IN_ACCOUNT.apiToken,
      CLOUDFLARE_API: { fetch: account.fetch } as unknown as Fetcher,
    },
  };
}
