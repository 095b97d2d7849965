/**
 * What a project gets to answer an interaction (a command, a component, a
 * modal submit): the interaction token in a short-lived token
 * (kit/shortLivedToken.ts: sealed, bound to that project, expiring), so user
 * code never holds the provider's token and one project cannot answer
 * another's interaction. It also says what the
 * interaction was (`kind`, and whether it came from a message), which decides
 * how each answer is sent (interactionAnswers.ts). Interaction tokens live
 * 15 minutes, and so does a reply token.
 */
import { shortLivedTokens } from "../kit/shortLivedToken.ts";
import type { ChatServerEnv } from "./env.ts";

export const REPLY_TOKEN_LIFETIME_MS = 15 * 60 * 1000;

/** What an interaction is: a slash command, a click or choice on a component, or a modal submitted. */
export type InteractionKind = "command" | "component" | "modal";

export interface ReplyClaims {
  interactionId: string;
  token: string;
  guildId: string;
  kind: InteractionKind;
  /** The message the component sits on (a component, or a modal a component opened); null otherwise. */
  messageId: string | null;
  exp: number;
}

const replyTokens = shortLivedTokens<Omit<ReplyClaims, "exp">>({
  name: "replyToken",
  context: "chatserver:reply",
  lifetimeMS: REPLY_TOKEN_LIFETIME_MS,
  missing: "replyToken is required: pass the command or interaction your handler received.",
  expired: "replyToken has expired: a command or interaction can be answered for 15 minutes.",
});

export const sealReplyToken = replyTokens.seal;

export async function openReplyToken(
  env: ChatServerEnv,
  projectId: number,
  replyToken: unknown,
  now = Date.now(),
): Promise<ReplyClaims> {
  const claims = await replyTokens.open(env, projectId, replyToken, now);
  // Tokens sealed before interactions had kinds answered commands.
  return { ...claims, kind: claims.kind ?? "command", messageId: claims.messageId ?? null };
}
