import { toWireComponents, type WireRow } from "../../contracts/chatComponents.ts";
import type { ChatInteractionMessage } from "../../contracts/chatServerEvents.ts";
import type { PluginCallRecord } from "./testRecords.ts";

/**
 * What the handlers a `testPlugin` drives have posted and shown, from their
 * recorded calls: a click then comes from the message that shows its
 * component (as a user can only click what is there), and a submitted
 * modal or view carries what it was opened with (its message, its
 * `private_metadata`).
 */

/** A workspace message as an action's `message` carries it. */
export interface PostedWorkspaceMessage {
  channel: string;
  ts: string;
  text: string;
  blocks: Record<string, unknown>[];
}

/** A workspace element found in a posted message: where it sits. */
export interface FoundWorkspaceElement {
  message: PostedWorkspaceMessage;
  blockId: string | null;
  element: Record<string, unknown>;
}

/** A chat-server component found in a posted message. */
export interface FoundChatComponent {
  message: ChatInteractionMessage;
  component: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json => !!value && typeof value === "object" && !Array.isArray(value);
const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

function wireRows(components: unknown): WireRow[] {
  if (components === undefined) return [];
  try {
    return toWireComponents(components);
  } catch {
    // The plugin refused it too: nothing of it was shown, nothing to click.
    return [];
  }
}

export class PostedMessages {
  private readonly chat = new Map<string, ChatInteractionMessage>();
  private readonly workspace = new Map<string, PostedWorkspaceMessage>();
  /** The message each chat modal (by customId) was opened from; null when a command opened it. */
  private readonly modalSources = new Map<string, ChatInteractionMessage | null>();
  /** The `private_metadata` each workspace view (by callback_id) was opened with. */
  private readonly viewMetadata = new Map<string, string>();

  /**
   * Takes in one interaction's calls; `from` is the message the interaction came from, if any,
   * `channelId` where it happened (where a reply lands: the provider answers a reply without it).
   */
  record(calls: readonly PluginCallRecord[], from: ChatInteractionMessage | null, channelId: string | null): void {
    for (const call of calls) {
      if (call.plugin === "chatserver") this.recordChat(call, from, channelId);
      if (call.plugin === "workspace") this.recordWorkspace(call);
    }
  }

  private putChat(message: ChatInteractionMessage): void {
    // Newest last: the last message showing a component is the one clicked.
    this.chat.delete(message.id);
    this.chat.set(message.id, message);
  }

  private recordChat(
    { action, input, answer }: PluginCallRecord,
    from: ChatInteractionMessage | null,
    channelId: string | null,
  ): void {
    const answered = (answer ?? {}) as { messageId?: unknown; channelId?: unknown };
    if (action === "reply" || action === "followup" || action === "send-message") {
      const id = str(answered.messageId);
      if (!id) return;
      this.putChat({
        id,
        channelId: str(answered.channelId) ?? channelId,
        content: str(input.content) ?? "",
        components: wireRows(input.components),
      });
    } else if (action === "update" || action === "edit-message") {
      const id = action === "update" ? from?.id : str(input.messageId);
      const before = id ? (this.chat.get(id) ?? (from?.id === id ? from : undefined)) : undefined;
      if (!id || !before) return;
      this.putChat({
        ...before,
        ...(input.content !== undefined ? { content: str(input.content) ?? "" } : {}),
        ...(input.components !== undefined ? { components: wireRows(input.components) } : {}),
      });
    } else if (action === "show-modal" && isObject(input.modal)) {
      const customId = str(input.modal.customId);
      if (customId) this.modalSources.set(customId, from);
    }
  }

  private recordWorkspace({ action, input, answer }: PluginCallRecord): void {
    const answered = (answer ?? {}) as { channel?: unknown; ts?: unknown };
    const blocks = Array.isArray(input.blocks) ? input.blocks.filter(isObject) : [];
    if (action === "send-message" || action === "thread-reply" || action === "edit-message") {
      const channel = str(answered.channel) ?? str(input.channel);
      const ts = str(answered.ts) ?? str(input.ts);
      if (!channel || !ts) return;
      const key = `${channel}/${ts}`;
      this.workspace.delete(key);
      this.workspace.set(key, { channel, ts, text: str(input.text) ?? "", blocks });
    } else if (action === "open-view" && isObject(input.view)) {
      const callbackId = str(input.view.callback_id);
      if (callbackId) this.viewMetadata.set(callbackId, str(input.view.private_metadata) ?? "");
    }
  }

  /** The newest chat message showing a component with this exact customId. */
  chatComponent(customId: string): FoundChatComponent | null {
    for (const message of [...this.chat.values()].reverse()) {
      for (const row of message.components as WireRow[]) {
        const component = (row.components ?? []).find((c) => (c as Json).custom_id === customId);
        if (component) return { message, component: component as Json };
      }
    }
    return null;
  }

  /** The newest workspace message showing an element with this exact action_id (in an actions block or as an accessory). */
  workspaceElement(actionId: string): FoundWorkspaceElement | null {
    for (const message of [...this.workspace.values()].reverse()) {
      for (const block of message.blocks) {
        const elements = [...(Array.isArray(block.elements) ? block.elements : []), block.accessory].filter(isObject);
        const element = elements.find((e) => e.action_id === actionId);
        if (element) return { message, blockId: str(block.block_id), element };
      }
    }
    return null;
  }

  modalSource(customId: string): ChatInteractionMessage | null {
    return this.modalSources.get(customId) ?? null;
  }

  viewPrivateMetadata(callbackId: string): string {
    return this.viewMetadata.get(callbackId) ?? "";
  }
}
