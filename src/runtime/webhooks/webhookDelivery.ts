import { webhookDeliveryLine } from "../../contracts/webhookDeliveryLine.ts";
import { errorResponse, PlatformError } from "../../core/errors.ts";
import { hex } from "../../core/crypto/encoding.ts";
import { readBodyBytes } from "../../core/web/jsonBody.ts";
import { parseDeliveryBody } from "../../core/webhooks/parseDeliveryBody.ts";
import { idHeadersOf, WEBHOOK_PROVIDERS, type WebhookProvider } from "../../core/webhooks/webhookProviders.ts";
import { type Clock, systemClock } from "../../engine/api/clock.ts";
import { workflow } from "../workflow/index.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { projectVariables } from "../entry/projectVariables.ts";
import { webhookEndpoint, type WebhookDecision } from "./webhookEndpoints.ts";

/** Where deliveries read the time (signature freshness); tests put their own clock here. */
export const webhookHost: { clock: Clock } = { clock: systemClock };

/** The largest delivery accepted (the providers send far less; Stripe's cap is 256 KiB). */
export const MAX_DELIVERY_BYTES = 1024 * 1024;
/** How long a delivery id keeps answering its first run: longer than any provider retries (Stripe: 3 days). */
export const DELIVERY_ID_TTL_MS = 7 * 86_400_000;
const PREFIX = "/__platform/webhooks/";

/** The idempotency key of a delivery: readable when the provider's id is, else its SHA-256. */
async function idempotencyKeyOf(name: string, deliveryId: string): Promise<string> {
  if (/^[\x20-\x7e]{1,160}$/.test(deliveryId)) return `webhook/${name}/${deliveryId}`;
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(deliveryId));
  return `webhook/${name}/sha256:${hex(digest)}`;
}

function refused(name: string, reason: string, message: string): Response {
  console.log(webhookDeliveryLine({ webhook: name, delivery: null, verified: false, refused: reason }));
  return errorResponse(new PlatformError("unauthorized", `Webhook "${name}": ${message}`));
}

async function act(
  name: string,
  decision: WebhookDecision,
  deliveryId: string | null,
): Promise<Record<string, unknown>> {
  if (decision === null) return { ignored: true };
  if (typeof decision !== "object") {
    throw new PlatformError("invalid_input", `webhook "${name}": route must answer { start }, { send } or null`);
  }
  if ("start" in decision && typeof decision.start === "object" && decision.start !== null) {
    const { workflow: workflowName, data, id } = decision.start;
    const key = deliveryId === null ? undefined : await idempotencyKeyOf(name, deliveryId);
    const run = await workflow.start(workflowName, data, {
      ...(id === undefined ? {} : { id }),
      ...(key === undefined ? {} : { idempotencyKey: key, idempotencyTTLMS: DELIVERY_ID_TTL_MS }),
    });
    return { runId: run.id, created: run.created };
  }
  if ("send" in decision && typeof decision.send === "object" && decision.send !== null) {
    const send = decision.send;
    if ("workflowId" in send) {
      const sent = await workflow.send(send.workflowId, send.event, send.payload, { start: send.start });
      return { runId: sent.runId, created: sent.created };
    }
    await workflow.send(send.runId, send.event, send.payload);
    return { runId: send.runId, sent: send.event };
  }
  throw new PlatformError("invalid_input", `webhook "${name}": route must answer { start }, { send } or null`);
}

/**
 * `POST /__platform/webhooks/<name>`: verifies the raw body against the
 * provider's signature with the project's secret (401 and nothing started
 * otherwise), then parses it and starts or resumes a run, keyed on the
 * provider's delivery id so a redelivery answers the same run. Answers as
 * soon as the run is recorded: the workflow runs afterwards.
 */
export async function handleWebhookDelivery(request: Request, env: PlatformEnv): Promise<Response | null> {
  const url = new URL(request.url);
  if (!url.pathname.startsWith(PREFIX)) return null;
  const name = url.pathname.slice(PREFIX.length);
  const endpoint = webhookEndpoint(name);
  if (!endpoint || request.method !== "POST") {
    return errorResponse(new PlatformError("not_found", `No route for ${request.method} ${url.pathname}.`));
  }
  const body = await readBodyBytes(request, MAX_DELIVERY_BYTES);
  const secret = projectVariables(env)[endpoint.secret];
  if (!secret) {
    console.error(`webhook ${name}: the project secret ${endpoint.secret} is not set; deliveries are refused`);
    return refused(name, "secret_missing", `the project secret ${endpoint.secret} is not set.`);
  }
  const provider: WebhookProvider = WEBHOOK_PROVIDERS[endpoint.verify];
  const check = await provider.verify(secret, { headers: request.headers, body, nowMS: webhookHost.clock() });
  if (!check.ok) return refused(name, check.reason, check.message);

  const payload = parseDeliveryBody(body, request.headers.get("content-type"));
  const handshake = provider.handshake?.(payload);
  if (handshake) {
    console.log(webhookDeliveryLine({ webhook: name, delivery: null, verified: true }));
    return handshake.json === undefined
      ? new Response(null, { status: handshake.status })
      : Response.json(handshake.json, { status: handshake.status });
  }
  const headers = idHeadersOf(provider, request.headers);
  const deliveryId = provider.deliveryId(request.headers, payload);
  const decision: WebhookDecision = endpoint.start
    ? { start: { workflow: endpoint.start, data: { event: payload, headers } } }
    : await endpoint.route!(payload, headers);
  const outcome = await act(name, decision, deliveryId);
  console.log(
    webhookDeliveryLine({
      webhook: name,
      delivery: deliveryId,
      verified: true,
      ...(typeof outcome.runId === "string" ? { runId: outcome.runId, started: outcome.created === true } : {}),
    }),
  );
  return Response.json({ delivery: deliveryId, ...outcome });
}
