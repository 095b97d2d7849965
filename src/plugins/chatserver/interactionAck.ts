/**
 * The first answer to an interaction, given once within the chat server's
 * 3-second deadline, by whoever comes first:
 *   - the project's handler, through a proxy call (`reply`, `update`,
 *     `showModal`): its answer goes to the interaction callback endpoint
 *     (`POST /interactions/{id}/{token}/callback`) while the webhook request
 *     is still open, which then answers 202 with no body (Discord's way for an
 *     answer sent by callback);
 *   - the webhook itself, once the handler has finished or `ACK_BUDGET_MS`
 *     passed: a deferred answer inline (5, "thinking…", for a command or a
 *     modal not opened from a message; 6, nothing visible, for a component),
 *     after which answers edit or follow up through the interaction webhook.
 * Both sides claim `ack:<interaction id>` (one atomic D1 insert) before they
 * answer, so exactly one first answer is sent.
 */
import { claimEvent } from "../../workers/db/eventDedupe.ts";
import { PLUGIN_ID, type ChatServerEnv } from "./env.ts";
import type { InteractionKind } from "./replyToken.ts";

/** How long the webhook waits for the handler before deferring: well inside the provider's 3 s. */
export const ACK_BUDGET_MS = 2_000;

/** Interaction callback types (Discord's). */
export const CALLBACK = {
  message: 4,
  deferredMessage: 5,
  deferredUpdate: 6,
  updateMessage: 7,
  modal: 9,
} as const;

/** Message flag: only the user who interacted sees it. */
export const EPHEMERAL = 64;

/** True for the one caller that gives the interaction its first answer. */
export function claimFirstAnswer(env: ChatServerEnv, interactionId: string): Promise<boolean> {
  return claimEvent(env.DB, PLUGIN_ID, `ack:${interactionId}`);
}

/**
 * True once per interaction for the first message answer (a reply): tells a
 * command's "thinking…" placeholder (to be replaced or removed) from a reply
 * already given (to be followed up).
 */
export function claimFirstReply(env: ChatServerEnv, interactionId: string): Promise<boolean> {
  return claimEvent(env.DB, PLUGIN_ID, `reply:${interactionId}`);
}

/**
 * Whether an interaction shows a "thinking…" placeholder while deferred (a
 * command, a modal not opened from a message), which `@original` then is;
 * otherwise `@original` is the message its component sits on.
 */
export function hasPlaceholder(kind: InteractionKind, messageId: string | null): boolean {
  return kind === "command" || (kind === "modal" && messageId === null);
}

/** The deferred answer the webhook gives when the handler has not answered in time. */
export function deferredAnswer(kind: InteractionKind, messageId: string | null): number {
  return hasPlaceholder(kind, messageId) ? CALLBACK.deferredMessage : CALLBACK.deferredUpdate;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `work`'s result if it settles within the budget (`CHATSERVER_ACK_WAIT` in tests), else `undefined`. */
export async function withinBudget<T>(env: ChatServerEnv, work: Promise<T>): Promise<{ value: T } | undefined> {
  const budget = (env.CHATSERVER_ACK_WAIT ?? sleep)(ACK_BUDGET_MS).then(() => undefined);
  return Promise.race([work.then((value) => ({ value })), budget]);
}
