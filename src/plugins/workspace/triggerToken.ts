/**
 * What a project gets to open a view after a click: the provider's
 * `trigger_id` in a short-lived token (kit/shortLivedToken.ts: sealed, bound
 * to that project, expiring) with its workspace, so user code never holds it
 * and one project cannot open a view with another's click. A trigger id opens a view for 3 seconds after the
 * click (the provider's rule), and so does a trigger token: an older one is
 * refused before any call.
 */
import { shortLivedTokens } from "../kit/shortLivedToken.ts";
import { PLUGIN_ID } from "./env.ts";

export const TRIGGER_LIFETIME_MS = 3_000;

const triggerTokens = shortLivedTokens<{ triggerId: string; teamId: string }>({
  name: "triggerToken",
  context: `${PLUGIN_ID}:trigger`,
  lifetimeMS: TRIGGER_LIFETIME_MS,
  missing:
    "triggerToken is required: pass the action your onAction handler received: workspace.openView(action, view).",
  expired:
    "The click is more than 3 seconds old: the workspace opens a view only within 3 seconds of it. Call workspace.openView before any slow work.",
});

export const sealTriggerToken = triggerTokens.seal;
export const openTriggerToken = triggerTokens.open;
