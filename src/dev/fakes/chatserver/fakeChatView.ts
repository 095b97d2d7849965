/** The fake chat server's guild as its member sees it (the console's chat window; src/dev/fakes/chatView.ts). */
import { CHAT_VIEW_MESSAGES, type ChatView, type ChatViewField, type ChatViewRow } from "../chatView.ts";
import { COMPONENT } from "./fakeComponentRules.ts";
import type { OpenModal } from "./fakeInteractionTriggers.ts";
import { FLAGS, type Message, type MessageStore } from "./fakeMessages.ts";

const STYLES: Record<number, string> = {
  1: "primary",
  2: "secondary",
  3: "success",
  4: "danger",
  5: "link",
  6: "premium",
};

type Json = Record<string, unknown>;
const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

function rowsOf(components: unknown[]): ChatViewRow[] {
  return components.flatMap((raw): ChatViewRow[] => {
    const children = ((raw as Json | null)?.components ?? []) as Json[];
    const select = children.find((c) => c.type !== COMPONENT.button);
    if (select) {
      const options = Array.isArray(select.options) ? (select.options as Json[]) : [];
      return [
        {
          kind: "select",
          select: {
            id: String(select.custom_id ?? ""),
            placeholder: str(select.placeholder),
            options: options.map((o) => ({ label: String(o.label ?? ""), value: String(o.value ?? "") })),
            minValues: typeof select.min_values === "number" ? select.min_values : 1,
            maxValues: typeof select.max_values === "number" ? select.max_values : 1,
            disabled: select.disabled === true,
          },
        },
      ];
    }
    return [
      {
        kind: "buttons",
        buttons: children.map((b) => ({
          label: String(b.label ?? ""),
          style: STYLES[Number(b.style)] ?? "primary",
          id: str(b.custom_id),
          url: str(b.url),
          disabled: b.disabled === true,
        })),
      },
    ];
  });
}

function visibleTo(message: Message, userId: string): boolean {
  return !(message.flags & FLAGS.ephemeral) || message.interaction_metadata?.user.id === userId;
}

function fieldsOf(modal: OpenModal): ChatViewField[] {
  return modal.inputs.map((input) => ({
    id: String(input.custom_id ?? ""),
    label: String(input.label ?? input.custom_id ?? ""),
    style: input.style === 2 ? "paragraph" : "short",
    required: input.required !== false,
    placeholder: str(input.placeholder),
    value: str(input.value),
  }));
}

export function chatServerView(
  guild: { id: string; channels: string[] },
  userId: string,
  messages: MessageStore,
  modals: OpenModal[],
): ChatView {
  return {
    resourceId: guild.id,
    channels: guild.channels.map((id, i) => ({
      id,
      name: i === 0 ? "general" : `channel-${i + 1}`,
      messages: messages
        .inChannel(id)
        .filter((m) => visibleTo(m, userId))
        .slice(-CHAT_VIEW_MESSAGES)
        .map((m) => {
          const by = m.interaction_metadata;
          return {
            id: m.id,
            author: m.author.global_name ?? m.author.username,
            bot: m.author.bot === true,
            text: m.content,
            ephemeral: Boolean(m.flags & FLAGS.ephemeral),
            pending: Boolean(m.flags & FLAGS.loading),
            edited: m.edited_timestamp !== null,
            command: by?.name ? `${by.user.global_name ?? by.user.username} used /${by.name}` : null,
            rows: rowsOf(m.components),
          };
        }),
    })),
    forms: modals.map((modal) => ({
      id: modal.customId,
      title: modal.title,
      submitLabel: "Submit",
      channelId: modal.channelId,
      fields: fieldsOf(modal),
    })),
  };
}
