import { parseStreamRoutePath } from "../../contracts/streamRoute.ts";
import { errorResponse, isPlatformError, PlatformError } from "../../core/errors.ts";
import { verifyStreamToken } from "../../core/streamToken.ts";
import type { Clock } from "../../engine/api/clock.ts";
import type { StreamBatch } from "../../engine/streams/liveRunStream.ts";
import { OFFSET_TEXT, type StreamMessage } from "../../engine/streams/runStream.ts";
import type { WorkflowBackend } from "../../engine/api/workflowApi.ts";

/** One answer for every refused token, and for a run that is gone: the caller learns nothing about which. */
const REFUSED =
  "This stream URL is not valid: it was altered, has expired or is for another run. Ask the page for a new one.";

export interface StreamRouteDeps {
  backend(): WorkflowBackend | null;
  secret(): string | null;
  now: Clock;
  /** Waits between reads of an idle run's stream; injectable for tests. */
  sleep?(ms: number): Promise<void>;
}

/** One message as an SSE event: `id:` its offset, `event:` its topic, `data:` its JSON on one line. */
export function serverSentEvent(message: StreamMessage): string {
  return `id: ${message.offset}\nevent: ${message.topic}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

/**
 * `GET /__platform/streams/<run id>/<token>`: the run's stream as
 * `text/event-stream`, from the message after `Last-Event-ID` (or the first),
 * the token's topics only, closed after the run's last message. Everything is
 * checked before a byte is streamed: a refused token or a run that is gone
 * answers 401, one message for all.
 */
export async function serveRunStream(request: Request, deps: StreamRouteDeps): Promise<Response | null> {
  const route = parseStreamRoutePath(new URL(request.url).pathname);
  if (!route) return null;
  if (request.method !== "GET")
    return errorResponse(new PlatformError("not_found", "A stream URL answers GET only."), { allow: "GET" });
  const secret = deps.secret();
  const backend = deps.backend();
  const read = backend?.readStream?.bind(backend);
  if (!secret || !read) return errorResponse(new PlatformError("not_found", "This project serves no run streams."));
  const check = await verifyStreamToken(route.token, secret, route.runId, deps.now());
  if (!check.ok) return errorResponse(new PlatformError("unauthorized", REFUSED));
  const lastEventId = request.headers.get("last-event-id");
  if (lastEventId !== null && !OFFSET_TEXT.test(lastEventId.trim()))
    return errorResponse(
      new PlatformError(
        "invalid_input",
        `Last-Event-ID must be a message offset (an integer ≥ 0), not "${lastEventId}".`,
      ),
    );
  const topics = check.claims.topics;
  const readFrom = (from: number) => read(route.runId, { from, ...(topics ? { topics } : {}) });
  let from = lastEventId === null ? 0 : Number(lastEventId.trim()) + 1;
  let first: StreamBatch;
  try {
    first = await readFrom(from);
  } catch (error) {
    if (isPlatformError(error) && error.code === "not_found")
      return errorResponse(new PlatformError("unauthorized", REFUSED));
    throw error;
  }
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const encoder = new TextEncoder();
  let closed = false;
  let batch: StreamBatch | null = first;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      for (;;) {
        if (closed) return;
        if (batch === null) batch = await readFrom(from);
        const current: StreamBatch = batch;
        batch = null;
        if (current.messages.length > 0) {
          from = (current.messages[current.messages.length - 1] as StreamMessage).offset + 1;
          controller.enqueue(encoder.encode(current.messages.map(serverSentEvent).join("")));
        }
        if (current.ended) {
          closed = true;
          controller.close();
          return;
        }
        if (current.messages.length > 0) return;
        // Nothing new: a comment keeps proxies from closing an idle connection.
        controller.enqueue(encoder.encode(": waiting\n\n"));
        if (current.retryAfterMS !== undefined) await sleep(current.retryAfterMS);
        return;
      }
    },
    cancel() {
      closed = true;
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    },
  });
}
