/**
 * What a trigger of the fake chat server (`POST /__fake/trigger`) resolves to
 * before an interaction is sent: the message whose component is clicked and
 * the click's data, or the open modal a submit fills in; else the 400 that
 * says why the chat server would send nothing.
 */
import { COMPONENT, findComponent } from "./fakeComponentRules.ts";
import type { Message, MessageStore } from "./fakeMessages.ts";

/** A modal the fake's user has open (a callback 9), until it is submitted. */
export interface OpenModal {
  /** The interaction it answered. */
  openedBy: string;
  guildId: string;
  channelId: string;
  sourceMessageId: string | null;
  customId: string;
  title: string;
  /** Its text inputs as the modal gave them. */
  inputs: Record<string, unknown>[];
}

/** What a trigger asks for (`POST /__fake/trigger`), already resolved to a guild and channel. */
export interface InteractionTrigger {
  kind: "command" | "component" | "modal";
  guildId: string;
  /** The channel asked for, or null for the guild's first (a command) or any (a click, a submit). */
  channelId: string | null;
  guildChannels: string[];
  name?: string;
  text?: string;
  customId?: string;
  values?: string[];
  fields?: Record<string, string>;
  messageId?: string;
  deliveries: number;
  timestamp?: string;
}

export const triggerError = (status: number, error: string) => Response.json({ error }, { status });

/** The newest message of the guild (or the channel asked for) showing `customId`, as a click finds it. */
export function messageShowing(messages: MessageStore, t: InteractionTrigger): Message | Response {
  const channels = t.channelId ? [t.channelId] : t.guildChannels;
  const candidates = messages
    .all()
    .filter((m) => channels.includes(m.channel_id) && (!t.messageId || m.id === t.messageId))
    .reverse();
  const found = candidates.find((m) => findComponent(m.components, t.customId!));
  if (!found)
    return triggerError(
      400,
      `No message ${t.messageId ? `${t.messageId} ` : ""}in server ${t.guildId} shows a component with custom_id ${JSON.stringify(t.customId)}: the chat server sends clicks only for components a message shows.`,
    );
  return found;
}

export function componentData(t: InteractionTrigger, message: Message): Record<string, unknown> | Response {
  const component = findComponent(message.components, t.customId!)!;
  if (component.disabled === true)
    return triggerError(400, `The component ${JSON.stringify(t.customId)} is disabled: it cannot be clicked.`);
  if (component.type === COMPONENT.button) {
    if (t.values?.length) return triggerError(400, "A button has no values: --values is for a select.");
    return { custom_id: t.customId, component_type: COMPONENT.button };
  }
  const options = Array.isArray(component.options) ? (component.options as { value?: unknown }[]) : [];
  const values = t.values ?? [];
  const min = typeof component.min_values === "number" ? component.min_values : 1;
  const max = typeof component.max_values === "number" ? component.max_values : 1;
  if (values.length < min || values.length > max)
    return triggerError(
      400,
      `This select takes ${min === max ? min : `${min}–${max}`} value(s) (got ${values.length}).`,
    );
  const unknown = values.filter((v) => !options.some((o) => o.value === v));
  if (unknown.length)
    return triggerError(
      400,
      `Not options of this select: ${unknown.join(", ")} (it offers ${options.map((o) => String(o.value)).join(", ")}).`,
    );
  return { custom_id: t.customId, component_type: component.type, values };
}

/** The newest open modal of the guild with `customId`, and its submit's data, or why there is none. */
export function modalSubmit(
  modals: readonly OpenModal[],
  t: InteractionTrigger,
): { modal: OpenModal; data: Record<string, unknown> } | Response {
  const modal = [...modals]
    .reverse()
    .find((m) => m.guildId === t.guildId && m.customId === t.customId && (!t.channelId || m.channelId === t.channelId));
  if (!modal)
    return triggerError(
      400,
      `No modal with custom_id ${JSON.stringify(t.customId)} is open in server ${t.guildId}: the chat server sends a submit only for a modal the bot opened.`,
    );
  const fields = t.fields ?? {};
  const ids = modal.inputs.map((input) => String(input.custom_id));
  const unknown = Object.keys(fields).filter((key) => !ids.includes(key));
  if (unknown.length)
    return triggerError(400, `The modal has no field ${unknown.join(", ")} (its fields: ${ids.join(", ")}).`);
  for (const input of modal.inputs) {
    const value = fields[String(input.custom_id)] ?? "";
    const min = typeof input.min_length === "number" ? input.min_length : 0;
    const max = typeof input.max_length === "number" ? input.max_length : 4000;
    if (input.required !== false && !value)
      return triggerError(400, `The field ${String(input.custom_id)} is required.`);
    if (value && (value.length < min || value.length > max))
      return triggerError(400, `The field ${String(input.custom_id)} takes ${min}–${max} characters.`);
  }
  return {
    modal,
    data: {
      custom_id: modal.customId,
      components: modal.inputs.map((input) => ({
        type: COMPONENT.row,
        components: [
          { type: COMPONENT.textInput, custom_id: input.custom_id, value: fields[String(input.custom_id)] ?? "" },
        ],
      })),
    },
  };
}
