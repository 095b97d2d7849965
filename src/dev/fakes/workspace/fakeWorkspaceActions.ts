/** A click in the fake workspace: a button or a choice in a select of a message the bot posted (`block_actions`). */
import { findElement, optionWithValue } from "./fakeBlockRules.ts";
import type { createResponseUrls } from "./fakeResponseUrls.ts";
import type { createWorkspaceMessages } from "./fakeWorkspaceMessages.ts";
import { FAKE_CHANNEL_NAMES, FAKE_USER_ID, userPayload, type TeamInfo } from "./fakeWorkspaceTeam.ts";
import type { createWorkspaceViews } from "./fakeWorkspaceViews.ts";
import { refusedTrigger } from "./fakeWorkspaceWire.ts";

/** What a click reads and hands out: the messages it finds the element in, a trigger_id, a response_url. */
export interface BlockActionsContext {
  apiAppId: string;
  messages: ReturnType<typeof createWorkspaceMessages>;
  views: ReturnType<typeof createWorkspaceViews>;
  responseUrls: ReturnType<typeof createResponseUrls>;
}

/** The `block_actions` payload of a click on `params.actionId`, or why the fake refuses it. */
export function blockActions(
  { apiAppId, messages, views, responseUrls }: BlockActionsContext,
  team: TeamInfo,
  params: Record<string, unknown>,
  origin: string,
): Record<string, unknown> | Response {
  const actionId = typeof params.actionId === "string" ? params.actionId : "";
  if (!actionId) return refusedTrigger("an action needs actionId");
  const channel = typeof params.channel === "string" ? params.channel : null;
  const ts = typeof params.message === "string" ? params.message : null;
  const message = messages
    .all()
    .reverse()
    .find(
      (m) =>
        m.teamId === team.id &&
        (!channel || m.channel === channel) &&
        (!ts || m.ts === ts) &&
        (!m.ephemeralTo || m.ephemeralTo === FAKE_USER_ID) &&
        findElement(m.blocks ?? [], actionId),
    );
  if (!message)
    return refusedTrigger(
      `No message in workspace ${team.id} has an element with action_id ${JSON.stringify(actionId)}: Slack sends block actions only for elements a message shows.`,
    );
  const { element, blockId } = findElement(message.blocks ?? [], actionId)!;
  const value = typeof params.value === "string" ? params.value : undefined;
  const actionTs = messages.nextTs();
  let action: Record<string, unknown>;
  if (element.type === "button") {
    if (value !== undefined && value !== element.value)
      return refusedTrigger("A button sends its own value: --value is for a select.");
    action = {
      type: "button",
      action_id: actionId,
      block_id: blockId,
      text: element.text,
      ...(element.value !== undefined ? { value: element.value } : {}),
      ...(element.style !== undefined ? { style: element.style } : {}),
      action_ts: actionTs,
    };
  } else if (element.type === "static_select") {
    const option = value === undefined ? null : optionWithValue(element, value);
    if (!option)
      return refusedTrigger(`Choose one of this select's options with --value (got ${JSON.stringify(value ?? null)}).`);
    action = {
      type: "static_select",
      action_id: actionId,
      block_id: blockId,
      selected_option: option,
      action_ts: actionTs,
    };
  } else {
    return refusedTrigger(
      `The element ${JSON.stringify(actionId)} is a ${String(element.type)}: the fake clicks buttons and chooses in static selects.`,
    );
  }
  return {
    type: "block_actions",
    user: userPayload(team),
    api_app_id: apiAppId,
    token: "fake-verification-token",
    container: {
      type: "message",
      message_ts: message.ts,
      channel_id: message.channel,
      is_ephemeral: Boolean(message.ephemeralTo),
    },
    trigger_id: views.issueTrigger(team.id),
    team: { id: team.id, domain: team.id.toLowerCase() },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: message.channel, name: FAKE_CHANNEL_NAMES[message.channel] ?? message.channel },
    message: {
      type: "message",
      user: message.user,
      ts: message.ts,
      text: message.text,
      ...(message.blocks ? { blocks: message.blocks } : {}),
    },
    state: { values: {} },
    response_url: responseUrls.issue(origin, { teamId: team.id, channel: message.channel, messageTs: message.ts }),
    actions: [action],
  };
}
