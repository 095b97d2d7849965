/**
 * Every error the platform reports carries a stable `code` that callers can
 * branch on, and a message a person can act on. HTTP statuses are mapped from
 * codes in exactly one place: `httpStatusFor`.
 * @example
 * if (error instanceof PlatformError && error.code === "rate_limited") return new Response("slow down", { status: 429 });
 */
export type PlatformErrorCode =
  | "invalid_input"
  | "malformed_json"
  | "payload_too_large"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "quota_exceeded"
  | "already_active"
  | "workflow_id_mismatch"
  | "unknown_workflow"
  | "workflow_failed"
  | "cancelled"
  | "not_ready"
  | "code_expired"
  | "code_used"
  | "gone"
  | "build_failed"
  | "upstream_error"
  | "revoked"
  | "internal";

const STATUS: Record<PlatformErrorCode, number> = {
  invalid_input: 400,
  malformed_json: 400,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  // A count an account may not go past (e.g. its projects); waiting does not help, unlike rate_limited.
  quota_exceeded: 403,
  already_active: 409,
  workflow_id_mismatch: 500,
  unknown_workflow: 404,
  // A run ended in workflow_failed; `run.result()` rejects with this code.
  workflow_failed: 422,
  // A run ended in workflow_cancelled; `run.result()` rejects with this code.
  cancelled: 409,
  // A runtime function was called before the platform injected what it needs
  // (e.g. `workflow.start` before the engine was initialised).
  not_ready: 503,
  code_expired: 410,
  code_used: 410,
  // A link that worked once and never will again (an expired callback URL).
  gone: 410,
  build_failed: 400,
  upstream_error: 502,
  // A plugin connection the provider revoked (uninstall): reinstall the plugin.
  revoked: 409,
  internal: 500,
};

/**
 * The brand of the platform's error classes: an own, non-enumerable property
 * under this key, set by their constructors, holding the class's kind. Unlike
 * `name` (which any error may carry, and users set freely) it says the error
 * was made by one of these classes, from any copy of this module (a bundle
 * may hold two) and after an actor RPC (which copies an error's own
 * properties, not its class).
 */
const BRAND_KEY = "platform.errorKind";

/** The branded error classes: PlatformError here, NonRetryableError and RetryAfterError in the engine. */
export type PlatformErrorKind = "PlatformError" | "NonRetryableError" | "RetryAfterError";

/** Marks `error` as made by the class of `kind` (its constructor calls this). */
export function brandError(error: Error, kind: PlatformErrorKind): void {
  Object.defineProperty(error, BRAND_KEY, { value: kind, enumerable: false, configurable: true });
}

/** The kind an error was branded with; undefined for anything else. */
export function errorKindOf(value: unknown): PlatformErrorKind | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const kind = (value as Record<string, unknown>)[BRAND_KEY];
  return kind === "PlatformError" || kind === "NonRetryableError" || kind === "RetryAfterError" ? kind : undefined;
}

/**
 * Any error as it crosses a boundary as JSON: a PlatformError's `cause`
 * chain on the wire, a failed step's `error` in its step_failed event. Read
 * back with {@link errorFromJSON}, it is described rather than re-created: an
 * `Error` with the same name, message, code, stack and cause.
 */
export interface ErrorJSON {
  name: string;
  message: string;
  /** The error's own `code` when it has a string one (a PlatformError's code, Node's `ECONNRESET`, …). */
  code?: string;
  /** Present where the boundary keeps stacks (a step's error); never in HTTP answers. */
  stack?: string;
  cause?: ErrorJSON;
}

/** How much of an error {@link errorToJSON} keeps: the longest name, message and stack (0: none), and how many causes. */
export interface ErrorJSONLimits {
  name: number;
  message: number;
  stack: number;
  causes: number;
}

/** What a PlatformError's cause chain keeps on the wire (HTTP bodies, `toJSON`): no stacks, at most 3 causes deep. */
export const WIRE_ERROR_LIMITS: ErrorJSONLimits = { name: 200, message: 4000, stack: 0, causes: 3 };

/**
 * The one converter from a thrown value to {@link ErrorJSON}, within
 * `limits` (each text cut with a trailing "…"). Never throws: a getter that
 * throws, a non-Error value or a cycle of causes are described as they can be.
 */
export function errorToJSON(error: unknown, limits: ErrorJSONLimits): ErrorJSON {
  const json: ErrorJSON = { name: cut(readText(error, "name") ?? nameOf(error), limits.name), message: "" };
  json.message = cut(
    error instanceof Error || isErrorLike(error) ? (readText(error, "message") ?? "") : describeValue(error),
    limits.message,
  );
  const code = readText(error, "code");
  if (code !== undefined) json.code = cut(code, limits.name);
  const stack = limits.stack > 0 ? readText(error, "stack") : undefined;
  if (stack !== undefined) json.stack = cut(stack, limits.stack);
  const cause = readProperty(error, "cause");
  if (cause !== undefined && limits.causes > 0)
    json.cause = errorToJSON(cause, { ...limits, causes: limits.causes - 1 });
  return json;
}

/** An Error described by `json` (its stack is the described one, not where this ran). */
export function errorFromJSON(json: ErrorJSON): Error {
  const error = new Error(json.message, json.cause ? { cause: errorFromJSON(json.cause) } : undefined);
  error.name = json.name;
  if (json.code !== undefined) Object.assign(error, { code: json.code });
  if (json.stack !== undefined) error.stack = json.stack;
  return error;
}

/** A PlatformError on the wire (HTTP bodies' `error`, RPC): what `toJSON` writes and `fromJSON` reads. */
export interface PlatformErrorJSON {
  code: PlatformErrorCode;
  message: string;
  details?: Record<string, unknown>;
  /** What caused it, as {@link WIRE_ERROR_LIMITS} keep it. */
  cause?: ErrorJSON;
}

/**
 * The platform's error: a stable `code` (mapped to an HTTP status when a handler lets it escape) and a
 * message a person can act on.
 * @example
 * try { await workflow.send(runId, "approval", { by: "ada" }); }
 * catch (error) { if (error instanceof PlatformError && error.code === "conflict") return new Response("already done", { status: 409 }); throw error; }
 */
export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly details: Record<string, unknown> | undefined;

  /** `options.cause`: the error this one reports (kept as the standard `cause`, and on the wire). */
  constructor(
    code: PlatformErrorCode,
    message: string,
    details?: Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "PlatformError";
    this.code = code;
    this.details = details;
    brandError(this, "PlatformError");
  }

  toJSON(): PlatformErrorJSON {
    const json: PlatformErrorJSON = { code: this.code, message: this.message };
    if (this.details) json.details = this.details;
    if (this.cause !== undefined) json.cause = errorToJSON(this.cause, WIRE_ERROR_LIMITS);
    return json;
  }

  /**
   * The error `value` describes (a `toJSON` result, an HTTP body's `error`, a
   * PlatformError that crossed RPC or came from another copy of this module).
   * An unknown or missing code becomes `fallback.code` (`internal` unless
   * given), a missing message `fallback.message`; `details` is kept only when
   * it is a non-empty object. A cause is kept: a branded one as a
   * PlatformError, another Error as it is, a JSON one as {@link errorFromJSON} reads it.
   */
  static fromJSON(value: unknown, fallback: { code?: PlatformErrorCode; message?: string } = {}): PlatformError {
    const remote = (typeof value === "object" && value !== null ? value : {}) as {
      code?: unknown;
      message?: unknown;
      details?: unknown;
      cause?: unknown;
    };
    const code =
      typeof remote.code === "string" && Object.hasOwn(STATUS, remote.code)
        ? (remote.code as PlatformErrorCode)
        : (fallback.code ?? "internal");
    const message =
      typeof remote.message === "string" && remote.message ? remote.message : (fallback.message ?? "Internal error");
    const details =
      typeof remote.details === "object" &&
      remote.details !== null &&
      !Array.isArray(remote.details) &&
      Object.keys(remote.details).length
        ? (remote.details as Record<string, unknown>)
        : undefined;
    const cause = causeFrom(remote.cause);
    return new PlatformError(code, message, details, cause === undefined ? undefined : { cause });
  }
}

/** Whether `value` is a PlatformError: of this class, of another copy of it, or one that crossed an actor RPC. */
export function isPlatformError(value: unknown): value is Error & { code: PlatformErrorCode; details?: unknown } {
  return value instanceof PlatformError || errorKindOf(value) === "PlatformError";
}

/** `value` as this module's PlatformError when it is one (see {@link isPlatformError}); null otherwise. */
export function asPlatformError(value: unknown): PlatformError | null {
  if (value instanceof PlatformError) return value;
  return isPlatformError(value) ? PlatformError.fromJSON(value) : null;
}

export function httpStatusFor(code: PlatformErrorCode): number {
  return STATUS[code];
}

/** The JSON body every platform endpoint answers an error with. */
export function errorResponse(error: unknown, headers?: HeadersInit): Response {
  const known = asPlatformError(error) ?? new PlatformError("internal", "Internal error");
  return Response.json({ error: known.toJSON() }, { status: httpStatusFor(known.code), headers });
}

function causeFrom(cause: unknown): unknown {
  if (cause === undefined || cause === null) return undefined;
  const platform = asPlatformError(cause);
  if (platform) return platform;
  if (cause instanceof Error) return cause;
  const json = cause as Partial<ErrorJSON>;
  if (typeof json === "object" && typeof json.name === "string" && typeof json.message === "string")
    return errorFromJSON(json as ErrorJSON);
  return undefined;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

function isErrorLike(value: unknown): boolean {
  return typeof value === "object" && value !== null && typeof readProperty(value, "message") === "string";
}

function readProperty(value: unknown, key: string): unknown {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

function readText(value: unknown, key: string): string | undefined {
  const text = readProperty(value, key);
  return typeof text === "string" ? text : undefined;
}

function nameOf(value: unknown): string {
  if (value instanceof Error || isErrorLike(value)) return "Error";
  return `Non-Error ${value === null ? "null" : typeof value}`;
}

/** A thrown value that is not an error, in words. */
function describeValue(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    // BigInt, cycles, or an object whose toJSON throws.
    try {
      return String(value);
    } catch {
      return "(a value that cannot be shown)";
    }
  }
}
