import type { SessionCodeConsumption } from "../../objects/SessionCode.ts";
import type { PluginEnv } from "./pluginEnv.ts";

export const SESSION_CODE_PATTERN = /^[0-9a-f]{64}$/;

/** What to tell a person whose install link was refused. */
export const SESSION_CODE_REFUSALS = {
  unknown: "This install link is not valid. Run `platform plugin install` again.",
  expired: "This install link has expired (links last 2 minutes). Run `platform plugin install` again.",
  used: "This install link was already used. Run `platform plugin install` again.",
  wrong_plugin: "This install link is for another plugin.",
} as const;

/**
 * Uses an install code once, for `pluginId` (the `SessionCode` actor named by
 * the code decides atomically). A code that is not 64 hex characters is
 * `unknown` without touching any actor.
 */
export async function consumeSessionCode(
  env: Pick<PluginEnv, "SESSION_CODES">,
  code: string | null | undefined,
  pluginId: string,
): Promise<SessionCodeConsumption> {
  if (typeof code !== "string" || !SESSION_CODE_PATTERN.test(code) || !env.SESSION_CODES)
    return { ok: false, reason: "unknown" };
  const stub = env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code));
  return stub.consume(pluginId);
}
