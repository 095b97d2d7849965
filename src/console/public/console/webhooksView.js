// @ts-check
// The Webhooks section of a project: each verified endpoint's URL and its last deliveries (time,
// delivery id, verified or why not, the run it started), what `platform webhook list` prints, from
// the same API route (GET /projects/:slug/webhooks). Delivery ids are the provider's text (GitHub's
// is a header anyone may set): shown as text, their control characters inert.
import { appendTo, el, formatTime, shortRunId } from "./dom.js";
import { printableLine } from "./printableLine.js";

/**
 * A delivery as the API answers it (src/contracts/webhookDeliveryLine.ts, with the time of its log line).
 * @typedef {{ at: number, delivery: string | null, verified: boolean, refused?: string, runId?: string,
 *   started?: boolean }} WebhookDelivery
 * @typedef {{ name: string, url: string, verify: string, start?: string,
 *   deliveries: WebhookDelivery[] }} WebhookEndpoint
 */

/** What became of a delivery, in `platform webhook list`'s words (the run itself is linked beside it). @param {WebhookDelivery} d */
export function deliveryOutcome(d) {
  if (!d.verified) return `refused: ${d.refused ?? "unverified"}`;
  if (d.runId === undefined) return "verified, nothing started";
  return d.started ? "verified, started the run" : "verified, run already started (redelivery)";
}

/**
 * @param {string} slug
 * @param {{
 *   api: (method: string, path: string) => Promise<any>,
 *   errorText: (error: unknown) => string,
 *   runHref: (runId: string) => string,
 * }} io
 */
export function webhooksSection(slug, { api, errorText, runHref }) {
  const status = el("p", { role: "status", class: "meta" }, "Loading…");
  const section = el(
    "section",
    { id: "webhooks", "aria-labelledby": "webhooks-heading" },
    el("h3", { id: "webhooks-heading" }, "Webhooks"),
    status,
  );
  void (async () => {
    /** @type {WebhookEndpoint[]} */
    let webhooks;
    try {
      ({ webhooks } = await api("GET", `/projects/${encodeURIComponent(slug)}/webhooks`));
    } catch (error) {
      status.textContent = `Could not load the webhook endpoints: ${errorText(error)}`;
      return;
    }
    status.textContent = webhooks.length
      ? "Each endpoint's newest deliveries, from the project's recent log. The same as platform webhook list."
      : 'No webhook endpoints: register one with webhook("name", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "workflow" }).';
    for (const endpoint of webhooks) section.append(...endpointView(endpoint, runHref));
  })();
  return section;
}

/** @param {WebhookEndpoint} endpoint @param {(runId: string) => string} runHref */
function endpointView(endpoint, runHref) {
  const head = [
    el("h4", {}, endpoint.name),
    el("p", {}, "URL to give the provider: ", el("code", {}, endpoint.url)),
    el(
      "p",
      { class: "meta" },
      // Not the secret's name: the console shows no secret, not even its name (docs/console.md).
      `verify ${endpoint.verify}, ${endpoint.start ? `starts ${endpoint.start}` : "route decides"}`,
    ),
  ];
  if (!endpoint.deliveries.length) return [...head, el("p", {}, "No deliveries in the project's recent log.")];
  const rows = endpoint.deliveries.map((d) =>
    el(
      "tr",
      {},
      el("td", {}, formatTime(d.at)),
      el("td", {}, el("code", {}, printableLine(d.delivery ?? "-"))),
      el("td", {}, deliveryOutcome(d)),
      appendTo(el("td", {}), ...(d.runId ? [el("a", { href: runHref(d.runId) }, shortRunId(d.runId))] : [])),
    ),
  );
  return [
    ...head,
    el(
      "table",
      { class: "webhook-deliveries" },
      el("caption", { class: "visually-hidden" }, `Deliveries to ${endpoint.name}`),
      el(
        "thead",
        {},
        el("tr", {}, ...["Time", "Delivery id", "Outcome", "Run"].map((h) => el("th", { scope: "col" }, h))),
      ),
      el("tbody", {}, ...rows),
    ),
  ];
}
