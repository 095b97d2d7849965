import type { RequestRecord } from "../../../../console/public/console/logLines.js";

/**
 * The terminal lines of `platform dev` for requests and workflow steps (`--quiet` silences both): the
 * words are the console's and `platform logs`'s (logLines.js); what is particular to the terminal is here.
 */
export {
  formatRequestLine,
  formatStepLines,
  messageWithStackLines,
  type RequestRecord,
  shortRunId,
  spokenDuration,
} from "../../../../console/public/console/logLines.js";

/** Miniflare's own request line (`GET /path 200 OK (3ms)`, colours stripped), or null for any other message. */
export function parseMiniflareRequestLine(message: string): RequestRecord | null {
  const match = /^([A-Z]+) (\S*) (\d{3})\b.*?\((\d+)ms\)/.exec(message);
  if (!match) return null;
  return { method: match[1]!, path: match[2]!, status: Number(match[3]), ms: Number(match[4]) };
}

export { isIdleRecoveryLine } from "../../../../contracts/recoveryLine.ts";
