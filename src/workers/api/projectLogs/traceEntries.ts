import { isIdleRecoveryLine } from "../../../contracts/recoveryLine.ts";
import { bounded, LOG_STACK_LIMIT, LOG_TEXT_LIMIT, type NewLogEntry } from "./logEntry.ts";
import { redactedPath } from "./redactedPath.ts";

/** The platform's own calls into a project (kicks, crons, plugin deliveries, metadata): no request line of the project's. */
const INTERNAL_PATH = /^\/(__platform|__workflow|__cron|__plugin)(\/|$)/;

/** A logged value as `console.log` shows it: strings as they are, anything else as JSON (or its String form). */
function shown(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * What one invocation of a project's worker (a Tail Worker's trace item)
 * adds to its log: each `console.*` call (with the stack of an error it
 * logged), each exception it did not catch, and, for a request from
 * outside, the request line (method, path, status, duration). Durations are
 * the trace's wall time; where the runtime does not measure it (workerd
 * locally reports 0), the time from the event's start to `receivedAt`, when
 * the trace reached the platform. The recovery cron's idle lines are left out.
 */
export function entriesFromTrace(item: TraceItem, receivedAt: number): NewLogEntry[] {
  const entries: NewLogEntry[] = [];
  for (const log of item.logs) {
    const parts = Array.isArray(log.message) ? (log.message as unknown[]) : [log.message];
    const message = parts.map(shown).join(" ");
    if (isIdleRecoveryLine(message)) continue;
    const stack = log.errorInfo?.find((info) => typeof info?.stack === "string" && info.stack)?.stack;
    entries.push({
      kind: "console",
      at: log.timestamp,
      level: log.level,
      message: bounded(message, LOG_TEXT_LIMIT),
      ...(stack ? { stack: bounded(stack, LOG_STACK_LIMIT) } : {}),
    });
  }
  for (const exception of item.exceptions) {
    entries.push({
      kind: "exception",
      at: exception.timestamp,
      name: bounded(exception.name, 200),
      message: bounded(exception.message, LOG_TEXT_LIMIT),
      ...(exception.stack ? { stack: bounded(exception.stack, LOG_STACK_LIMIT) } : {}),
    });
  }
  const event = item.event as Partial<TraceItemFetchEventInfo> | null;
  if (event?.request?.url) {
    // The runtime's redaction takes run ids for secrets: the log redacts the URL itself (redactedPath.ts).
    const url = new URL(event.request.getUnredacted?.().url ?? event.request.url);
    if (!INTERNAL_PATH.test(url.pathname)) {
      const started = item.eventTimestamp ?? receivedAt;
      entries.push({
        kind: "request",
        at: started,
        method: event.request.method,
        path: bounded(redactedPath(url.pathname + url.search), LOG_TEXT_LIMIT),
        // No response: the invocation threw (or was cut off) before answering.
        status: event.response?.status ?? 500,
        ms: Math.round(item.wallTime > 0 ? item.wallTime : Math.max(0, receivedAt - started)),
      });
    }
  }
  return entries;
}
