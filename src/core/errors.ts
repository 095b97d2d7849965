/**
 * Every error the platform reports carries a stable `code` that callers can
 * branch on, and a message a person can act on. HTTP statuses are mapped from
 * codes in exactly one place: `httpStatusFor`.
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
  | "seq_conflict"
  | "unknown_workflow"
  | "workflow_failed"
  | "cancelled"
  | "not_ready"
  | "code_expired"
  | "code_used"
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
  seq_conflict: 409,
  unknown_workflow: 404,
  // A run ended in workflow_failed; `run.result()` rejects with this code.
  workflow_failed: 422,
  // A run ended in workflow_cancelled (beyond the spec); `run.result()` rejects with this code.
  cancelled: 409,
  // A runtime function was called before the platform injected what it needs
  // (e.g. `workflow.start` before the engine was initialised).
  not_ready: 503,
  code_expired: 410,
  code_used: 410,
  build_failed: 400,
  upstream_error: 502,
  // A plugin connection the provider revoked (uninstall): reinstall the plugin.
  revoked: 409,
  internal: 500,
};

/** A PlatformError on the wire (HTTP bodies' `error`, RPC): what `toJSON` writes and `fromJSON` reads. */
export interface PlatformErrorJSON {
  code: PlatformErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class PlatformError extends Error {
  readonly code: PlatformErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: PlatformErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "PlatformError";
    this.code = code;
    this.details = details;
  }

  toJSON(): PlatformErrorJSON {
    return this.details
      ? { code: this.code, message: this.message, details: this.details }
      : { code: this.code, message: this.message };
  }

  /**
   * The error `value` describes (a `toJSON` result, an HTTP body's `error`, an
   * error that crossed RPC without its class). An unknown or missing code
   * becomes `fallback.code` (`internal` unless given), a missing message
   * `fallback.message`; `details` is kept only when it is a non-empty object.
   */
  static fromJSON(value: unknown, fallback: { code?: PlatformErrorCode; message?: string } = {}): PlatformError {
    const remote = (typeof value === "object" && value !== null ? value : {}) as {
      code?: unknown;
      message?: unknown;
      details?: unknown;
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
    return new PlatformError(code, message, details);
  }
}

export function httpStatusFor(code: PlatformErrorCode): number {
  return STATUS[code];
}

/** The JSON body every platform endpoint answers an error with. */
export function errorResponse(error: unknown, headers?: HeadersInit): Response {
  const known = error instanceof PlatformError ? error : new PlatformError("internal", "Internal error");
  return Response.json({ error: known.toJSON() }, { status: httpStatusFor(known.code), headers });
}
