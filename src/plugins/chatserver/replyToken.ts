/**
 * What a project gets to answer an interaction (a command, a component, a
 * modal submit): the interaction token sealed (AES-256-GCM, the token vault)
 * and bound to that project, so user code never holds the provider's token
 * and one project cannot answer another's interaction. It also says what the
 * interaction was (`kind`, and whether it came from a message), which decides
 * how each answer is sent (interactionAnswers.ts). Interaction tokens live
 * 15 minutes, and so does a reply token.
 */
import { PlatformError } from "../../core/errors.ts";
import { openToken, sealToken } from "../../workers/db/tokenVault.ts";
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

const context = (projectId: number) => `chatserver:reply:${projectId}`;

export function sealReplyToken(
  env: ChatServerEnv,
  projectId: number,
  claims: Omit<ReplyClaims, "exp">,
  now = Date.now(),
): Promise<string> {
  return sealToken(
    env.TOKEN_ENCRYPTION_KEY,
    JSON.stringify({ ...claims, exp: now + REPLY_TOKEN_LIFETIME_MS }),
    context(projectId),
  );
}

export async function openReplyToken(
  env: ChatServerEnv,
  projectId: number,
  replyToken: unknown,
  now = Date.now(),
): Promise<ReplyClaims> {
  if (typeof replyToken !== "string" || !replyToken || replyToken.length > 4096) {
    throw new PlatformError(
      "invalid_input",
      "replyToken is required: pass the command or interaction your handler received.",
    );
  }
  let claims: ReplyClaims;
  try {
    claims = JSON.parse(await openToken(env.TOKEN_ENCRYPTION_KEY, replyToken, context(projectId))) as ReplyClaims;
  } catch {
    throw new PlatformError("invalid_input", "replyToken is not valid for this project.");
  }
  if (typeof claims.exp !== "number" || now > claims.exp) {
    throw new PlatformError(
      "invalid_input",
      "replyToken has expired: a command or interaction can be answered for 15 minutes.",
    );
  }
  // Tokens sealed before interactions had kinds answered commands.
  return { ...claims, kind: claims.kind ?? "command", messageId: claims.messageId ?? null };
}
