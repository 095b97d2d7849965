/**
 * What a project gets to open a view after a click: the provider's
 * `trigger_id` sealed (the token vault) and bound to that project and
 * workspace, so user code never holds it and one project cannot open a view
 * with another's click. A trigger id opens a view for 3 seconds after the
 * click (the provider's rule), and so does a trigger token: an older one is
 * refused before any call.
 */
import { PlatformError } from "../../core/errors.ts";
import { openToken, sealToken } from "../../workers/db/tokenVault.ts";
import { PLUGIN_ID, type WorkspaceEnv } from "./env.ts";

export const TRIGGER_LIFETIME_MS = 3_000;

interface TriggerClaims {
  triggerId: string;
  teamId: string;
  exp: number;
}

const context = (projectId: number) => `${PLUGIN_ID}:trigger:${projectId}`;

export function sealTriggerToken(
  env: WorkspaceEnv,
  projectId: number,
  claims: Omit<TriggerClaims, "exp">,
  now = Date.now(),
): Promise<string> {
  return sealToken(
    env.TOKEN_ENCRYPTION_KEY,
    JSON.stringify({ ...claims, exp: now + TRIGGER_LIFETIME_MS }),
    context(projectId),
  );
}

export async function openTriggerToken(
  env: WorkspaceEnv,
  projectId: number,
  token: unknown,
  now = Date.now(),
): Promise<TriggerClaims> {
  if (typeof token !== "string" || !token || token.length > 4096)
    throw new PlatformError(
      "invalid_input",
      "triggerToken is required: pass the action your onAction handler received: workspace.openView(action, view).",
    );
  let claims: TriggerClaims;
  try {
    claims = JSON.parse(await openToken(env.TOKEN_ENCRYPTION_KEY, token, context(projectId))) as TriggerClaims;
  } catch {
    throw new PlatformError("invalid_input", "triggerToken is not valid for this project.");
  }
  if (typeof claims.exp !== "number" || now > claims.exp)
    throw new PlatformError(
      "invalid_input",
      "The click is more than 3 seconds old: the workspace opens a view only within 3 seconds of it. Call workspace.openView before any slow work.",
    );
  return claims;
}
