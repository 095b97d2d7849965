import { errorResponse, PlatformError, type PlatformErrorCode } from "../../core/errors.ts";
import { recordScriptTraces } from "../../workers/api/projectLogs/projectLogRoutes.ts";
import type { ApiEnv } from "../../workers/api/env.ts";
import { isScriptTraceToken, TRACE_SCRIPT_HEADER } from "./scriptTraceToken.ts";

/**
 * `platform up` only, in the platform's workerd: where the tail forwarder in
 * each pushed project's own workerd (src/dev/cli/up/tailForwarder.ts) hands over that
 * project's traces, recorded exactly as the API worker's Tail Worker handler
 * records them deployed (`recordScriptTraces`). The script is the one the
 * forwarder's token names (scriptTraceToken.ts), never one a trace names:
 * whoever else reaches this socket, a project included, is refused.
 */
export interface TraceIntakeEnv extends Pick<ApiEnv, "DB" | "PROJECT_LOGS"> {
  TRACE_INTAKE_KEY: string;
}

/** A batch is one invocation's traces; its console lines are cut to LOG_TEXT_LIMIT anyway. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

function refused(code: PlatformErrorCode, message: string): Response {
  return errorResponse(new PlatformError(code, message));
}

/** The posted JSON as traces: each an object with its `logs` and `exceptions` lists; anything else is not a batch. */
function tracesOf(value: unknown): TraceItem[] | null {
  if (!Array.isArray(value)) return null;
  const traces = value.every(
    (item) =>
      typeof item === "object" &&
      item !== null &&
      Array.isArray((item as TraceItem).logs) &&
      Array.isArray((item as TraceItem).exceptions),
  );
  return traces ? (value as TraceItem[]) : null;
}

export default {
  async fetch(request: Request, env: TraceIntakeEnv): Promise<Response> {
    if (request.method !== "POST") return refused("not_found", "The trace intake answers POST only.");
    const script = request.headers.get(TRACE_SCRIPT_HEADER) ?? "";
    const token = request.headers.get("authorization")?.replace(/^Bearer /, "");
    if (!script || !(await isScriptTraceToken(env.TRACE_INTAKE_KEY, script, token)))
      return refused("forbidden", "Only a project's own tail forwarder hands over its traces.");
    const body = await request.arrayBuffer();
    if (body.byteLength > MAX_BODY_BYTES)
      return refused("payload_too_large", `A batch of traces is at most ${MAX_BODY_BYTES} bytes.`);
    let traces: TraceItem[] | null;
    try {
      traces = tracesOf(JSON.parse(new TextDecoder().decode(body)));
    } catch {
      traces = null;
    }
    if (!traces) return refused("invalid_input", "The body must be a JSON list of traces.");
    await recordScriptTraces(env, script, traces);
    return new Response(null, { status: 204 });
  },
} satisfies ExportedHandler<TraceIntakeEnv>;
