import { PlatformError } from "../../core/errors.ts";
import { RUN_STATUSES, type RunStatus, type RunSummary } from "../execution/runSummary.ts";

/**
 * Which runs `workflow.list`, `workflow.cancelMany` and `workflow.rerunMany`
 * mean: every field given must hold (but for `name` and
 * `status`). One reader of user input for all three, so a list and a bulk
 * operation with the same filter name the same runs.
 */
export interface RunFilter {
  name?: string;
  status?: RunStatus;
  /** The run's position: the step it is in or will claim next; for a finished run, the step it ended in. */
  step?: string;
  /** Epoch ms: runs started at or after this time. */
  since?: number;
  /** Epoch ms: runs started before this time. */
  until?: number;
  /** Runs whose id begins with this. */
  idPrefix?: string;
  /** A case-sensitive substring of the failure reason (only a failed run has one). */
  error?: string;
  /** The project version whose code started the run (`v3`). */
  version?: string;
  /** Runs `workflow.rerun` made of this run. */
  rerunOf?: string;
}

/** A page of a list: the filter, how many runs, and where the previous page ended. */
export interface RunListQuery extends RunFilter {
  /** 1 to {@link MAX_LIST_LIMIT}. */
  limit: number;
  /** Opaque; the `cursor` of the previous page. */
  cursor?: string;
}

export interface RunListPage {
  /** Newest first (by start time). */
  runs: RunSummary[];
  /** Present when more runs match; pass it back to get the next page. */
  cursor?: string;
}

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 100;

/** The filter fields, in the order the CLI and the docs list them. */
export const RUN_FILTER_FIELDS = [
  "name",
  "status",
  "step",
  "since",
  "until",
  "idPrefix",
  "error",
  "version",
  "rerunOf",
] as const satisfies readonly (keyof RunFilter)[];

const TIME_FIELDS = new Set<string>(["since", "until"]);
const VERSION = /^v[1-9][0-9]{0,8}$/;
const MAX_TEXT = 256;
const MAX_ERROR_TEXT = 500;

function invalid(what: string, message: string): PlatformError {
  return new PlatformError("invalid_input", `${what}: ${message}`);
}

function text(value: unknown, field: string, what: string, max = MAX_TEXT): string {
  if (typeof value !== "string" || value === "" || value.length > max)
    throw invalid(what, `${field} must be a non-empty string of at most ${max} characters`);
  return value;
}

/**
 * Checks a user's filter: known fields only (a misspelt field must never
 * widen a bulk operation), each of the right type. Throws `invalid_input`
 * naming the field.
 */
export function toRunFilter(input: unknown, what: string, { paging = false }: { paging?: boolean } = {}): RunFilter {
  if (input === undefined || input === null) return {};
  if (typeof input !== "object" || Array.isArray(input)) throw invalid(what, "the filter must be an object");
  const filter: RunFilter = {};
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (value === undefined) continue;
    switch (key) {
      case "status":
        if (!RUN_STATUSES.includes(value as RunStatus))
          throw invalid(what, `status must be one of ${RUN_STATUSES.join(", ")}, got ${JSON.stringify(value)}`);
        filter.status = value as RunStatus;
        break;
      case "since":
      case "until":
        if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0)
          throw invalid(what, `${key} must be a time in epoch milliseconds, got ${JSON.stringify(value)}`);
        filter[key] = value;
        break;
      case "version":
        if (typeof value !== "string" || !VERSION.test(value))
          throw invalid(what, `version must be a version like "v3", got ${JSON.stringify(value)}`);
        filter.version = value;
        break;
      case "error":
        filter.error = text(value, key, what, MAX_ERROR_TEXT);
        break;
      case "name":
      case "step":
      case "idPrefix":
      case "rerunOf":
        filter[key] = text(value, key, what);
        break;
      case "limit":
      case "cursor":
        // Read by toRunListQuery; a bulk operation acts on every run that matches.
        if (!paging) throw invalid(what, `${key} is for listing; a bulk operation acts on every run that matches`);
        break;
      default:
        throw invalid(what, `unknown filter field ${JSON.stringify(key)} (known: ${RUN_FILTER_FIELDS.join(", ")})`);
    }
  }
  return filter;
}

/** Checks a list's filter, limit and cursor, filling in the default limit. */
export function toRunListQuery(input: unknown = {}, what = "workflow.list"): RunListQuery {
  const query: RunListQuery = { ...toRunFilter(input, what, { paging: true }), limit: DEFAULT_LIST_LIMIT };
  const { limit, cursor } = (input ?? {}) as { limit?: unknown; cursor?: unknown };
  if (limit !== undefined) {
    if (!Number.isInteger(limit) || (limit as number) < 1 || (limit as number) > MAX_LIST_LIMIT)
      throw invalid(what, `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${String(limit)}`);
    query.limit = limit as number;
  }
  if (cursor !== undefined) {
    if (typeof cursor !== "string" || cursor === "")
      throw invalid(what, "cursor must be the string returned by a previous call");
    decodeListCursor(cursor);
    query.cursor = cursor;
  }
  return query;
}

/** The filter part of a query: what a bulk operation matches. */
export function filterOf(query: RunFilter): RunFilter {
  const filter: RunFilter = {};
  for (const field of RUN_FILTER_FIELDS)
    if (query[field] !== undefined) (filter as Record<string, unknown>)[field] = query[field];
  return filter;
}

export function isEmptyFilter(filter: RunFilter): boolean {
  return RUN_FILTER_FIELDS.every((field) => filter[field] === undefined);
}

/**
 * A filter from a URL's query string (the API's and the project's list
 * routes): times and the limit as numbers when they are digits, anything
 * else as given, so the check names it.
 */
export function filterFromSearchParams(params: URLSearchParams): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  for (const [key, value] of params) {
    filter[key] = (TIME_FIELDS.has(key) || key === "limit") && /^\d{1,16}$/.test(value) ? Number(value) : value;
  }
  return filter;
}

/** A filter as a query string, for the routes above. */
export function filterToSearchParams(filter: RunFilter & { limit?: number; cursor?: string }): URLSearchParams {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(filter)) if (value !== undefined) params.set(key, String(value));
  return params;
}

/** Whether a run matches a filter (the memory store's search; the SQL stores say the same in SQL). */
export function matchesFilter(run: RunSummary, filter: RunFilter): boolean {
  return (
    (filter.name === undefined || run.name === filter.name) &&
    (filter.status === undefined || run.status === filter.status) &&
    (filter.step === undefined || run.step === filter.step) &&
    (filter.since === undefined || run.createdAt >= filter.since) &&
    (filter.until === undefined || run.createdAt < filter.until) &&
    (filter.idPrefix === undefined || run.id.startsWith(filter.idPrefix)) &&
    (filter.error === undefined || (run.error ?? "").includes(filter.error)) &&
    (filter.version === undefined || run.version === filter.version) &&
    (filter.rerunOf === undefined || run.rerunOf?.runId === filter.rerunOf)
  );
}

/**
 * Where a page ended: runs are listed newest first by start time, and runs
 * started in the same millisecond by the order the store first recorded them
 * (`position`, every store numbers its runs).
 */
export interface ListCursor {
  createdAt: number;
  position: number;
}

export function encodeListCursor(cursor: ListCursor): string {
  return `${cursor.createdAt.toString(36)}.${cursor.position.toString(36)}`;
}

/** Throws `invalid_input` for a cursor no store made. */
export function decodeListCursor(cursor: string): ListCursor {
  const match = /^([0-9a-z]{1,11})\.([0-9a-z]{1,11})$/.exec(cursor);
  const createdAt = match ? Number.parseInt(match[1]!, 36) : NaN;
  const position = match ? Number.parseInt(match[2]!, 36) : NaN;
  if (!Number.isSafeInteger(createdAt) || !Number.isSafeInteger(position) || position < 1)
    throw new PlatformError(
      "invalid_input",
      `workflow.list: cursor ${JSON.stringify(cursor)} is not one this platform returned`,
    );
  return { createdAt, position };
}

/** Whether a run (its start time and position) comes after the cursor in list order. */
export function isAfterCursor(run: ListCursor, cursor: ListCursor | undefined): boolean {
  if (!cursor) return true;
  return run.createdAt < cursor.createdAt || (run.createdAt === cursor.createdAt && run.position < cursor.position);
}
