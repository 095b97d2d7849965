import { parseRunCallbackRoutePath } from "../../contracts/runCallbackRoute.ts";
import { errorResponse, isPlatformError, PlatformError } from "../../core/errors.ts";
import { verifyRunCallbackToken } from "../../core/runCallbackToken.ts";
import { escapeHtml } from "../../core/web/html.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import type { Clock } from "../../engine/api/clock.ts";
import { type JsonValue, MAX_EVENT_PAYLOAD_BYTES } from "../../engine/api/json.ts";
import type { WorkflowBackend } from "../../engine/api/workflowApi.ts";

/** One answer for every refused token, and for a run that is gone: the caller learns nothing about which. */
const REFUSED = "This callback URL is not valid: it was altered or is for another run.";

export interface CallbackRouteDeps {
  backend(): WorkflowBackend | null;
  secret(): string | null;
  now: Clock;
}

const PAGE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  // The token is in the URL: no other site learns it from a link on the page.
  "referrer-policy": "no-referrer",
  "x-robots-tag": "noindex",
  "content-security-policy":
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>
<style>body{font:1.1rem/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}button{font:inherit;padding:.6rem 1.4rem}</style></head>
<body><main>
${body}
</main></body>
</html>
`;
}

/**
 * What a GET answers: nothing is delivered (mail scanners and link previews
 * open links), only a page whose one button POSTs the same URL.
 */
function confirmPage(event: string): string {
  return page(
    `Confirm ${event}`,
    `<h1>Confirm “${escapeHtml(event)}”</h1>
<p>This link sends “${escapeHtml(event)}” to a waiting workflow. It works once.</p>
<form method="post"><button type="submit">Confirm</button></form>`,
  );
}

/**
 * The body as the event's payload: JSON (any value), a form (an object of its
 * fields, a repeated field's last value), or nothing (null).
 */
export function callbackPayloadOf(contentType: string | null, bytes: Uint8Array): unknown {
  const type = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new PlatformError("invalid_input", "The body is not UTF-8 text.");
  }
  if (type === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  if (text.trim() === "") return null;
  if (type === "application/json" || type.endsWith("+json") || type === "") {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new PlatformError("malformed_json", "The body is not valid JSON.");
    }
  }
  throw new PlatformError(
    "invalid_input",
    `A callback URL takes a JSON body (application/json) or a form (application/x-www-form-urlencoded), not ${type}.`,
  );
}

/**
 * `/__platform/callbacks/<run id>/<token>` (ctx.callbackURL). POST: the body
 * goes to the run as the token's event, once; the run's actor spends the
 * token in the same append (runControl.ts appendCallbackEvent). GET: a
 * confirm page, nothing delivered. A refused token, or a run that is gone,
 * answers 401, one message for all; an expired genuine one 410 `gone`.
 */
export async function serveRunCallback(request: Request, deps: CallbackRouteDeps): Promise<Response | null> {
  const route = parseRunCallbackRoutePath(new URL(request.url).pathname);
  if (!route) return null;
  const method = request.method;
  if (method !== "GET" && method !== "HEAD" && method !== "POST")
    return errorResponse(new PlatformError("not_found", "A callback URL answers GET and POST only."), {
      allow: "GET, HEAD, POST",
    });
  const secret = deps.secret();
  const backend = deps.backend();
  if (!secret || !backend) return errorResponse(new PlatformError("not_found", "This project takes no run callbacks."));
  const check = await verifyRunCallbackToken(route.token, secret, route.runId, deps.now());
  if (!check.ok)
    return errorResponse(
      check.reason === "expired"
        ? new PlatformError("gone", "This callback URL has expired; ask for a new one.")
        : new PlatformError("unauthorized", REFUSED),
    );
  const { evt, jti } = check.claims;
  if (method !== "POST")
    return new Response(method === "HEAD" ? null : confirmPage(evt), { status: 200, headers: PAGE_HEADERS });
  try {
    const payload = callbackPayloadOf(
      request.headers.get("content-type"),
      await readBodyBytes(request, MAX_EVENT_PAYLOAD_BYTES),
    );
    await backend.send(route.runId, evt, payload as JsonValue, jti);
  } catch (error) {
    if (isPlatformError(error) && error.code === "not_found")
      return errorResponse(new PlatformError("unauthorized", REFUSED));
    return errorResponse(error);
  }
  if ((request.headers.get("accept") ?? "").includes("text/html"))
    return new Response(
      page("Received", `<h1>Received</h1><p>“${escapeHtml(evt)}” reached the workflow. You can close this page.</p>`),
      { status: 200, headers: PAGE_HEADERS },
    );
  return Response.json({ delivered: true, event: evt });
}
