import { PlatformError } from "../core/errors.ts";
import { parseJsonObject } from "../core/web/jsonBody.ts";

import { parseWorkflowShapes, type WorkflowShape } from "./workflowShapes.ts";

/**
 * The bodies of the CLI's and console's workflow controls:
 * `POST /projects/:slug/workflows/:runId/cancel`, `…/events`, `…/pause`,
 * `…/rerun`, and the bulk `POST /projects/:slug/workflows/cancel` and
 * `…/rerun`. Checked by the API worker before it asks the project, by the
 * project's own internal routes, and by `platform dev --node`'s local API,
 * so all refuse the same input with the same codes. A bulk body's filter is
 * only checked to be an object here: its fields are the engine's to read
 * (`toRunFilter`), in the project.
 */

/** Bodies above this are refused with `payload_too_large` (413) before they are parsed. */
export const MAX_CONTROL_BODY_BYTES = 64 * 1024;
export const MAX_EVENT_NAME_CHARS = 100;
export const MAX_CANCEL_REASON_CHARS = 500;

export interface CancelRunBody {
  reason?: string;
}

/** `{ reason? }` of a pause, as a cancel's. */
export type PauseRunBody = CancelRunBody;

export interface RerunRunBody {
  fromStep?: string;
}

export interface BulkCancelBody {
  /** The runs: `workflow.list`'s filter fields (checked by the engine), at least one. */
  filter: Record<string, unknown>;
  reason?: string;
  /** Count the runs the filter matches (`{ matched, affected: 0 }`) and act on none. */
  dryRun?: boolean;
}

export interface BulkRerunBody {
  filter: Record<string, unknown>;
  fromStep?: string;
  dryRun?: boolean;
}

const MAX_STEP_NAME_CHARS = 256;

export interface SendEventBody {
  name: string;
  /** Parsed from JSON, so plain JSON data. */
  payload?: unknown;
}

/** No control, format or unassigned characters: an event name is something a person types and reads. */
const PRINTABLE = /^[^\p{C}]+$/u;

function knownKeysOnly(body: Record<string, unknown>, allowed: readonly string[], what: string): void {
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length)
    throw new PlatformError(
      "invalid_input",
      `${what} takes only ${allowed.join(" and ")}; unknown field ${JSON.stringify(unknown[0])}.`,
    );
}

function reasonOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new PlatformError("invalid_input", "reason must be a string.");
  if (value.length > MAX_CANCEL_REASON_CHARS)
    throw new PlatformError("invalid_input", `reason must be at most ${MAX_CANCEL_REASON_CHARS} characters.`);
  return value;
}

function fromStepOf(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string" || value.length === 0 || value.length > MAX_STEP_NAME_CHARS)
    throw new PlatformError("invalid_input", `fromStep must be a step name of 1 to ${MAX_STEP_NAME_CHARS} characters.`);
  return value;
}

/** `{ reason? }`; an empty body is `{}` (a cancel needs no reason). */
export function parseCancelRunBody(bytes: Uint8Array, what = "A cancel"): CancelRunBody {
  if (bytes.byteLength === 0) return {};
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["reason"], what);
  const reason = reasonOf(body.reason);
  return reason === undefined ? {} : { reason };
}

/** `{ reason? }`, as a cancel's. */
export function parsePauseRunBody(bytes: Uint8Array): PauseRunBody {
  return parseCancelRunBody(bytes, "A pause");
}

/** `{ fromStep? }`; an empty body reruns from the start. */
export function parseRerunRunBody(bytes: Uint8Array): RerunRunBody {
  if (bytes.byteLength === 0) return {};
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["fromStep"], "A rerun");
  const fromStep = fromStepOf(body.fromStep);
  return fromStep === undefined ? {} : { fromStep };
}

function filterOf(body: Record<string, unknown>): Record<string, unknown> {
  const { filter } = body;
  if (typeof filter !== "object" || filter === null || Array.isArray(filter))
    throw new PlatformError("invalid_input", 'filter must be an object of run filters, e.g. { "status": "failed" }.');
  if (Object.keys(filter).length === 0)
    throw new PlatformError(
      "invalid_input",
      "filter is empty: name the runs to act on (e.g. a status and a workflow name).",
    );
  return filter as Record<string, unknown>;
}

function dryRunOf(value: unknown): { dryRun?: true } {
  if (value === undefined || value === false) return {};
  if (value !== true) throw new PlatformError("invalid_input", "dryRun must be true or false.");
  return { dryRun: true };
}

/** `{ filter, reason?, dryRun? }` of a bulk cancel. */
export function parseBulkCancelBody(bytes: Uint8Array): BulkCancelBody {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["filter", "reason", "dryRun"], "A bulk cancel");
  const reason = reasonOf(body.reason);
  return { filter: filterOf(body), ...(reason === undefined ? {} : { reason }), ...dryRunOf(body.dryRun) };
}

/** `{ filter, fromStep?, dryRun? }` of a bulk rerun. */
export function parseBulkRerunBody(bytes: Uint8Array): BulkRerunBody {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["filter", "fromStep", "dryRun"], "A bulk rerun");
  const fromStep = fromStepOf(body.fromStep);
  return { filter: filterOf(body), ...(fromStep === undefined ? {} : { fromStep }), ...dryRunOf(body.dryRun) };
}

/** A resume takes no body: what is sent (within {@link MAX_CONTROL_BODY_BYTES}) is not read. */
export function parseResumeRunBody(): Record<string, never> {
  return {};
}

/** The controls of one run (`POST …/workflows/:runId/<control>`) and the body each takes. */
export interface RunControlBodies {
  cancel: CancelRunBody;
  events: SendEventBody;
  pause: PauseRunBody;
  resume: Record<string, never>;
  rerun: RerunRunBody;
}

export type RunControl = keyof RunControlBodies;

/** Each run control's body parser: the one list of them the API worker and `platform dev --node` route by. */
export const RUN_CONTROL_BODIES: { readonly [C in RunControl]: (bytes: Uint8Array) => RunControlBodies[C] } = {
  cancel: parseCancelRunBody,
  events: parseSendEventBody,
  pause: parsePauseRunBody,
  resume: parseResumeRunBody,
  rerun: parseRerunRunBody,
};

/** The bulk controls (`POST …/workflows/<control>`) and their body parsers. */
export const BULK_CONTROL_BODIES = { cancel: parseBulkCancelBody, rerun: parseBulkRerunBody } as const;

/**
 * The project's stranded-runs check route. The path keeps its first name: a
 * deployed API worker and CLI call it.
 */
export const STRANDED_RUNS_CHECK_PATH = "/__workflow/check";

/** `{ workflows }` of the stranded-runs check (the project's `POST /__workflow/check`). */
export function parseStrandedRunsBody(bytes: Uint8Array): { workflows: WorkflowShape[] } {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["workflows"], "A stranded-runs check");
  return { workflows: parseWorkflowShapes(body.workflows ?? []) };
}

/** `{ name, payload? }`: name 1–100 printable characters, payload any JSON. */
export function parseSendEventBody(bytes: Uint8Array): SendEventBody {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["name", "payload"], "An event");
  return sendEventOf(body);
}

function sendEventOf(body: Record<string, unknown>): SendEventBody {
  const { name } = body;
  if (typeof name !== "string" || name.length === 0 || name.length > MAX_EVENT_NAME_CHARS || !PRINTABLE.test(name))
    throw new PlatformError(
      "invalid_input",
      `name must be the event's name: 1 to ${MAX_EVENT_NAME_CHARS} printable characters.`,
    );
  return body.payload === undefined ? { name } : { name, payload: body.payload };
}

/** `{ workflowId, name, payload?, start: { name, data? } }` of start-or-send (`workflow.send(workflowId, …, { start })`). */
export interface SendOrStartBody extends SendEventBody {
  workflowId: string;
  start: { name: string; data?: unknown };
}

/** The event as {@link parseSendEventBody} reads it, the workflow id it is for, and the workflow to start without one. */
export function parseSendOrStartBody(bytes: Uint8Array): SendOrStartBody {
  const body = parseJsonObject(bytes);
  knownKeysOnly(body, ["workflowId", "name", "payload", "start"], "A start-or-send");
  const { workflowId, start } = body;
  if (typeof workflowId !== "string" || workflowId.length === 0 || workflowId.length > 256)
    throw new PlatformError("invalid_input", "workflowId must be the workflow id: 1 to 256 characters.");
  if (typeof start !== "object" || start === null || Array.isArray(start))
    throw new PlatformError(
      "invalid_input",
      "start must be { name, data? }: the workflow to start when no run holds the id.",
    );
  const startFields = start as Record<string, unknown>;
  knownKeysOnly(startFields, ["name", "data"], "start");
  if (typeof startFields.name !== "string")
    throw new PlatformError("invalid_input", "start.name must be the name of a registered workflow.");
  const { name, payload } = sendEventOf(body);
  return {
    workflowId,
    name,
    ...(payload === undefined ? {} : { payload }),
    start: { name: startFields.name, ...(startFields.data === undefined ? {} : { data: startFields.data }) },
  };
}
