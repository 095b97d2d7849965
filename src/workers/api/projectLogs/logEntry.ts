/**
 * One line of a project's log as the platform keeps it (ProjectLog.ts): a
 * request the project answered (or a count of those past the request
 * budget), something its code logged, or an exception it did not catch. The console's and the CLI's words for them are in
 * src/console/public/console/logLines.js; its JSDoc types mirror these.
 */
export type NewLogEntry =
  | { kind: "request"; at: number; method: string; path: string; status: number; ms: number }
  /** Requests of one window past the lines it keeps (requestBudget.ts): counted, not kept one by one. */
  | { kind: "requests_skipped"; at: number; count: number; keptPerWindow: number; windowMS: number }
  | { kind: "console"; at: number; level: string; message: string; stack?: string }
  | { kind: "exception"; at: number; name: string; message: string; stack?: string };

export type LogEntry = NewLogEntry & { seq: number };

/** The longest message and path kept (longer ones end with "…"); a log line is not a place for a payload. */
export const LOG_TEXT_LIMIT = 4000;
/** The longest stack kept: its top frames. */
export const LOG_STACK_LIMIT = 8000;

/** `text` cut to `limit` characters, the last one an ellipsis when cut. */
export function bounded(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
