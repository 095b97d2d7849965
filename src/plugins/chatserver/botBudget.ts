/**
 * The shared bot's platform-wide cap. The chat server allows
 * one bot about 50 requests per second in all and then refuses that bot
 * everywhere; private projects are exempt from the proxy's `actions` rate, so
 * without a cap one of them could spend the allowance of every tenant. Two
 * limits, both in RateLimiter actors, both before the chat server is called:
 *   1. a project's share: `chatServerBot` in the project's own actor (5 per
 *      second, private projects included), one per bot action the project
 *      asks for (a sendMessage or editMessage with its channel check, one
 *      server's command registration); the callers take it, with the proxy's
 *      `actions` where that applies, before any request here;
 *   2. the global budget (`callBot`): 40 requests per second with the bot
 *      token across all projects, under the provider's 50, in the actor named
 *      `chatserver-bot`.
 * The share comes first, so a project past it spends nothing of the global
 * budget. Past either, the caller alone gets `rate_limited` (429, Retry-After).
 * A provider 429 with its global flag records "wait Retry-After" in the global
 * actor: no project's bot request reaches the chat server until then.
 *
 * Interaction callbacks (`reply`, `followup`) pass neither: they carry the
 * interaction's webhook token, not the bot token, and the chat server limits
 * them per interaction, not against the bot's global limit.
 */
import { PlatformError } from "../../core/errors.ts";
import type { RateTake } from "../../objects/RateLimiter.ts";
import { callChatServer } from "./chatServerApi.ts";
import { chatServerNow, type ChatServerEnv } from "./env.ts";

const GLOBAL_BOT_LIMITER = "chatserver-bot";
const GLOBAL_BOT_BUDGET: RateTake = { bucket: "bot", limit: 40, windowMS: 1_000 };
/** The global actor's record of the provider's own "wait" (a 429 with its global flag). */
const PROVIDER_PAUSE = "provider";

/** A request to the chat server with the bot token, within the global budget and the provider's pause. */
export async function callBot<T = unknown>(
  env: ChatServerEnv,
  method: string,
  path: string,
  body: unknown,
): Promise<T> {
  const global = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(GLOBAL_BOT_LIMITER));
  const decision = await global.takeAllUnlessPaused(PROVIDER_PAUSE, [GLOBAL_BOT_BUDGET], chatServerNow(env));
  if (!decision.allowed) {
    const retry = decision.retryAfterSeconds;
    throw new PlatformError(
      "rate_limited",
      decision.bucket === PROVIDER_PAUSE
        ? `The chat server asked the platform's bot to wait; retry in ${retry} s.`
        : `The platform's chat-server bot is at its limit of ${GLOBAL_BOT_BUDGET.limit} requests per second across all projects; retry in ${retry} s.`,
      { retryAfterSeconds: retry, bucket: decision.bucket },
    );
  }
  try {
    return await callChatServer<T>(env, { method, path, body, auth: "bot" });
  } catch (error) {
    if (error instanceof PlatformError && error.code === "rate_limited" && error.details?.global === true) {
      await global.pause(PROVIDER_PAUSE, chatServerNow(env) + Number(error.details.retryAfterSeconds) * 1000);
    }
    throw error;
  }
}
