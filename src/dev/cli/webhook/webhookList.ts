import type { WebhookDeliveryRecord } from "../../../contracts/webhookDeliveryLine.ts";
import { printableLine } from "../../../console/public/console/printableLine.js";
import { callPlatformApi, type PlatformTarget } from "../platformTarget.ts";
import { SHORT_RUN_ID, table, utc } from "../workflow/formatTimeline.ts";

/**
 * `platform webhook list`: each verified webhook endpoint of the project
 * (as its last push or `platform dev` recorded it) with its URL and its last
 * deliveries, as the API answers them (src/workers/api/projectWebhooksRoute.ts).
 */

export interface WebhookListRow {
  name: string;
  url: string;
  verify: string;
  secret: string;
  start?: string;
  /** Newest first. */
  deliveries: (WebhookDeliveryRecord & { at: number })[];
}

export async function fetchWebhookRows(target: PlatformTarget): Promise<WebhookListRow[]> {
  const path = `/projects/${encodeURIComponent(target.slug)}/webhooks`;
  return (await callPlatformApi<{ webhooks: WebhookListRow[] }>(target, "GET", path)).webhooks;
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
