import type { LogEntry } from "../../../console/public/console/logLines.js";
import { parseWebhookDeliveryLine, type WebhookDeliveryRecord } from "../../../contracts/webhookDeliveryLine.ts";
import { printableLine } from "../../../console/public/console/printableLine.js";
import { callPlatformApi, type PlatformTarget } from "../platformTarget.ts";
import { SHORT_RUN_ID, table, utc } from "../workflow/formatTimeline.ts";

/**
 * `platform webhook list`: each verified webhook endpoint of the project
 * (as its last push or `platform dev` recorded it) with its URL, and its
 * last deliveries read back from the project's log.
 */

/** How many of an endpoint's newest deliveries are shown. */
export const DELIVERIES_SHOWN = 5;
/** How much of the project's log is searched for deliveries (the most one read answers). */
const LOG_WINDOW = 500;

export interface WebhookEndpointRow {
  name: string;
  url: string;
  verify: string;
  secret: string;
  start?: string;
}

export interface WebhookListRow extends WebhookEndpointRow {
  /** Newest first, at most {@link DELIVERIES_SHOWN}. */
  deliveries: (WebhookDeliveryRecord & { at: number })[];
}

/** Each endpoint's newest deliveries among the log's entries. */
export function deliveriesByEndpoint(endpoints: WebhookEndpointRow[], entries: LogEntry[]): WebhookListRow[] {
  const records = entries
    .flatMap((entry) => {
      if (entry.kind !== "console") return [];
      const record = parseWebhookDeliveryLine(entry.message);
      return record ? [{ ...record, at: entry.at }] : [];
    })
    .reverse();
  return endpoints.map((endpoint) => ({
    ...endpoint,
    deliveries: records.filter((r) => r.webhook === endpoint.name).slice(0, DELIVERIES_SHOWN),
  }));
}

export async function fetchWebhookRows(target: PlatformTarget): Promise<WebhookListRow[]> {
  const project = `/projects/${encodeURIComponent(target.slug)}`;
  const [{ webhooks }, log] = await Promise.all([
    callPlatformApi<{ webhooks: WebhookEndpointRow[] }>(target, "GET", `${project}/webhooks`),
    callPlatformApi<{ entries: LogEntry[] }>(target, "GET", `${project}/logs?limit=${LOG_WINDOW}`),
  ]);
  return deliveriesByEndpoint(webhooks, log.entries);
}

function outcome(record: WebhookDeliveryRecord): string {
  if (!record.verified) return `refused: ${record.refused ?? "unverified"}`;
  if (record.runId === undefined) return "verified, nothing started";
  const run = record.runId.slice(0, SHORT_RUN_ID);
  return record.started ? `verified, started run ${run}` : `verified, run ${run} (already started: redelivery)`;
}

export function formatWebhookList(rows: WebhookListRow[]): string {
  if (rows.length === 0)
    return 'This project has no webhook endpoints: register one with webhook("name", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "workflow" }).\n';
  const blocks = rows.map((row) => {
    const head = `${row.name}  ${row.url}\n  verify ${row.verify}, secret ${row.secret}, ${row.start ? `starts ${row.start}` : "route decides"}`;
    if (row.deliveries.length === 0) return `${head}\n  no deliveries in the project's recent log\n`;
    const lines = table([
      ["  time", "delivery id", "outcome"],
      // A delivery id is the provider's text (GitHub's is a header anyone may set): printed inert.
      ...row.deliveries.map((d) => [`  ${utc(d.at)}`, printableLine(d.delivery ?? "-"), outcome(d)]),
    ]);
    return `${head}\n${lines}\n`;
  });
  return blocks.join("\n");
}
