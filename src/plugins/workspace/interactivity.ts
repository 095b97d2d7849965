/**
 * The provider's interactivity payloads on `POST /webhook` (after the
 * signature check): a form body `payload=<JSON>`, as Slack sends clicks and
 * submissions. `block_actions` (a button clicked, a select chosen in a message
 * the bot posted) delivers each action as kind `action` named by its
 * `action_id`, with a sealed trigger token that opens a view for 3 seconds;
 * `view_submission` (a view the bot opened, submitted) delivers kind `view`
 * named by its `callback_id`, with the values by action_id. Both are routed by
 * team to the project that claimed the workspace, deduplicated on
 * `trigger_id`, acknowledged at once with an empty 200 (which also closes a
 * submitted view) and delivered after the answer. Other payload types are
 * acknowledged and not delivered.
 */
import { PlatformError } from "../../core/errors.ts";
import { toPluginProject, type PluginDelivery } from "../../contracts/pluginDelivery.ts";
import { viewFieldsFromState } from "../../contracts/workspaceBlocks.ts";
import type { WorkspaceAction, WorkspaceViewSubmission } from "../../contracts/workspaceEvents.ts";
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import { findResourceOwner } from "../../workers/db/resourceClaims.ts";
import { deliverClaimedEvent } from "../kit/deliverClaimedEvent.ts";
import { makeResourceOwnerRef } from "../kit/resourceOwnerRef.ts";
import { PLUGIN_ID, RESOURCE_TYPE, type WorkspaceEnv } from "./env.ts";
import { sealTriggerToken } from "./triggerToken.ts";

type Json = Record<string, unknown>;

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const obj = (value: unknown): Json =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {};

/** The interactivity payload of a form body, or null when the body is not one. */
export function interactivityPayload(raw: Uint8Array, contentType: string | null): Json | null {
  if (!contentType?.toLowerCase().startsWith("application/x-www-form-urlencoded")) return null;
  const payload = new URLSearchParams(new TextDecoder().decode(raw)).get("payload");
  if (payload === null)
    throw new PlatformError("invalid_input", "A form body needs a payload field (Slack's interactivity payload).");
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    throw new PlatformError("malformed_json", "The interactivity payload is not valid JSON.");
  }
  if (!value || typeof value !== "object" || Array.isArray(value))
    throw new PlatformError("malformed_json", "The interactivity payload must be a JSON object.");
  return value as Json;
}

function userOf(payload: Json): { id: string; name?: string } {
  const user = obj(payload.user);
  const id = str(user.id);
  if (!id) throw new PlatformError("invalid_input", "An interactivity payload needs user.id.");
  const name = str(user.name) ?? str(user.username);
  return { id, ...(name ? { name } : {}) };
}

function actionOf(raw: unknown, payload: Json, teamId: string, triggerToken: string): WorkspaceAction {
  const action = obj(raw);
  const actionId = str(action.action_id);
  if (!actionId) throw new PlatformError("invalid_input", "A block action needs an action_id.");
  const selected = obj(action.selected_option);
  const several = Array.isArray(action.selected_options) ? action.selected_options.map(obj) : null;
  const values = several
    ? several.flatMap((o) => (str(o.value) ? [str(o.value)!] : []))
    : str(selected.value)
      ? [str(selected.value)!]
      : str(action.value)
        ? [str(action.value)!]
        : [];
  const container = obj(payload.container);
  const message = obj(payload.message);
  const messageTs = str(container.message_ts) ?? str(message.ts) ?? null;
  return {
    type: "action",
    teamId,
    actionId,
    blockId: str(action.block_id) ?? null,
    elementType: str(action.type) ?? "button",
    value: values[0] ?? null,
    values,
    user: userOf(payload),
    channel: str(obj(payload.channel).id) ?? str(container.channel_id) ?? null,
    messageTs,
    message:
      messageTs && payload.message
        ? {
            ts: messageTs,
            text: str(message.text) ?? "",
            blocks: Array.isArray(message.blocks) ? message.blocks : [],
          }
        : null,
    triggerToken,
    raw: action,
  };
}

function viewSubmissionOf(payload: Json, teamId: string): WorkspaceViewSubmission {
  const view = obj(payload.view);
  const callbackId = str(view.callback_id);
  const viewId = str(view.id);
  if (!callbackId || !viewId)
    throw new PlatformError("invalid_input", "A view submission needs view.id and view.callback_id.");
  const values = obj(obj(view.state).values);
  return {
    type: "view",
    teamId,
    callbackId,
    viewId,
    privateMetadata: str(view.private_metadata) ?? "",
    fields: viewFieldsFromState(values),
    values,
    user: userOf(payload),
  };
}

/** An interactivity payload: delivered (block actions, view submissions) or acknowledged; answers the provider. */
export async function handleInteractivity(payload: Json, env: WorkspaceEnv, ctx: ExecutionContext): Promise<Response> {
  if (payload.type !== "block_actions" && payload.type !== "view_submission")
    return new Response(null, { status: 200 });
  const teamId = str(obj(payload.team).id) ?? str(obj(payload.user).team_id) ?? str(obj(payload.view).team_id);
  const triggerId = str(payload.trigger_id);
  if (!teamId || !triggerId) throw new PlatformError("invalid_input", `${payload.type} needs team.id and trigger_id.`);
  const owner = await findResourceOwner(env.DB, PLUGIN_ID, RESOURCE_TYPE, teamId);
  if (!owner)
    throw new PlatformError(
      "not_found",
      `Slack workspace ${teamId} is not connected to any project on this platform. Install the app with \`platform plugin install workspace\`.`,
    );

  const deliveries: Pick<PluginDelivery, "kind" | "name" | "event" | "user">[] = [];
  if (payload.type === "block_actions") {
    if (!Array.isArray(payload.actions) || payload.actions.length === 0)
      throw new PlatformError("invalid_input", "block_actions needs at least one action.");
    const triggerToken = await sealTriggerToken(env, owner.project.id, { triggerId, teamId });
    for (const raw of payload.actions) {
      const action = actionOf(raw, payload, teamId, triggerToken);
      deliveries.push({ kind: "action", name: action.actionId, event: action, user: action.user });
    }
  } else {
    const submission = viewSubmissionOf(payload, teamId);
    deliveries.push({ kind: "view", name: submission.callbackId, event: submission, user: submission.user });
  }

  const dedupeKey = `interaction:${triggerId}`;
  // A repeat of a payload already taken: acknowledged, not delivered again.
  if (!(await claimEvent(env.DB, PLUGIN_ID, dedupeKey))) return new Response(null, { status: 200 });
  const common = {
    resource: await makeResourceOwnerRef(env, {
      pluginId: PLUGIN_ID,
      resourceType: RESOURCE_TYPE,
      externalResourceId: teamId,
    }),
    project: toPluginProject(owner.project),
  };
  ctx.waitUntil(
    (async () => {
      for (const delivery of deliveries)
        await deliverClaimedEvent(env, {
          project: owner.project,
          pluginId: PLUGIN_ID,
          dedupeKey,
          payload: { ...delivery, ...common },
          failed: (s) => s >= 500,
        });
    })(),
  );
  return new Response(null, { status: 200 });
}
