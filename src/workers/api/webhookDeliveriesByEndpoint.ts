import { parseWebhookDeliveryLine, type WebhookDeliveryRecord } from "../../contracts/webhookDeliveryLine.ts";
import type { LogEntry } from "./projectLogs/logEntry.ts";

/** How many of an endpoint's newest deliveries are shown (`platform webhook list`, the console). */
export const DELIVERIES_SHOWN = 5;

/** A delivery as the log recorded it, with the time of its line. */
export type WebhookDelivery = WebhookDeliveryRecord & { at: number };

/** Each endpoint with its newest deliveries among the log's entries (oldest first), newest first. */
export function webhookDeliveriesByEndpoint<E extends { name: string }>(
  endpoints: E[],
  entries: readonly LogEntry[],
): (E & { deliveries: WebhookDelivery[] })[] {
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
