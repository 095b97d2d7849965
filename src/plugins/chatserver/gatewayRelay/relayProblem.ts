/**
 * What the relay tells the people it serves when the chat server will not
 * let it hold the bot's Gateway session: the cause (what the provider
 * answered, what stops working) and the fix. The chat-server connection
 * health of every project shows it (the bot is shared), until READY.
 */
import type { PluginProblem } from "../../../contracts/pluginProblem.ts";
import type { SessionStartLimit } from "./gatewayProtocol.ts";

/** Recorded as the plugin's problem; its code is `close_<code>`, `token_refused` or `session_starts_used_up`. */
export type RelayProblem = PluginProblem;

const RETRY_NOTE = "The relay tries again every 10 minutes.";
const NO_EVENTS = "messages and reactions do not reach any project";

/** After a fatal close (gatewayProtocol.ts `FATAL_CLOSE_CODES`). */
export function problemForClose(code: number, reason: string): RelayProblem {
  const said = `close ${code}${reason ? ` (${reason})` : ""}`;
  switch (code) {
    case 4014:
      return {
        code: "close_4014",
        cause: `The chat server refused the bot's Gateway session with ${said}: the relay asks for the privileged Message Content intent, which is not enabled for the bot, so ${NO_EVENTS}.`,
        fix: `Enable the Message Content intent for the bot at the chat server's developer portal (your application → Bot → Privileged Gateway Intents → Message Content Intent). ${RETRY_NOTE}`,
      };
    case 4013:
      return {
        code: "close_4013",
        cause: `The chat server refused the bot's Gateway session with ${said}: the intents the relay sent are not a valid intents value, so ${NO_EVENTS}.`,
        fix: `This is a platform bug: report it with this line. Check that the Message Content intent is enabled for the bot at the developer portal meanwhile. ${RETRY_NOTE}`,
      };
    case 4004:
      return tokenRefused(said);
    case 4010:
    case 4011:
      return {
        code: `close_${code}`,
        cause: `The chat server refused the bot's Gateway session with ${said}: the relay's shard count does not suit the bot, so ${NO_EVENTS}.`,
        fix: `Set CHATSERVER_GATEWAY_SHARDS on the chat-server plugin worker to the \`shards\` that GET /gateway/bot recommends (1 for a bot in fewer than 2500 servers) and redeploy it. ${RETRY_NOTE}`,
      };
    default:
      return {
        code: `close_${code}`,
        cause: `The chat server refused the bot's Gateway session with ${said}, so ${NO_EVENTS}.`,
        fix: `This is a platform bug (the relay speaks Gateway v10, JSON): report it with this line. ${RETRY_NOTE}`,
      };
  }
}

/** `GET /gateway/bot` or IDENTIFY refused the bot token. */
export function tokenRefused(said = "HTTP 401"): RelayProblem {
  return {
    code: "token_refused",
    cause: `The chat server refused the bot token (${said}), so ${NO_EVENTS}.`,
    fix: `Set the chat-server plugin worker's CHATSERVER_BOT_TOKEN secret to the bot's current token (developer portal → Bot → Reset Token) and redeploy it. ${RETRY_NOTE}`,
  };
}

/**
 * `session_start_limit.remaining` is below what shards may spend at once
 * (0 for most bots): one IDENTIFY too many would make the provider end every
 * session of the bot and reset its token (gateway.mdx "Identifying"), so the
 * relay waits for the reset.
 */
export function sessionStartsUsedUp(limit: SessionStartLimit): RelayProblem {
  const minutes = Math.max(1, Math.ceil(limit.resetAfterMS / 60_000));
  const left =
    limit.remaining > 0 ? `has only ${limit.remaining} of the ${limit.total}` : `has used all ${limit.total}`;
  return {
    code: "session_starts_used_up",
    cause: `The bot ${left} Gateway session starts the chat server allows per day, so ${NO_EVENTS} until they reset (in about ${minutes} min).`,
    fix: "Nothing to do: the relay waits for the reset and then connects. Something that restarts the relay over and over (a crash loop, frequent redeploys of the plugin worker) uses them up.",
  };
}
