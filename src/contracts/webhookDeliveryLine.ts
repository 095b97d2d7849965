/**
 * One webhook delivery as the project's log records it: the delivery log
 * `platform webhook list` reads back. The runtime writes it as a console line
 * (`webhook delivery {…}`), so it is kept, bounded, where the project's other
 * lines are (the newest 1,000 per project); a line the project logs itself
 * in this shape shows in its own list, and nowhere else.
 */
export interface WebhookDeliveryRecord {
  webhook: string;
  /** The provider's delivery id; null when refused before it was read or when the provider sends none. */
  delivery: string | null;
  verified: boolean;
  /** Why a delivery was refused (`missing`, `bad_signature`, `stale`, `secret_missing`, …). */
  refused?: string;
  /** The run the delivery started, was answered with (a redelivery), or sent its event to. */
  runId?: string;
  /** True when this delivery started the run. */
  started?: boolean;
}

const PREFIX = "webhook delivery ";

export function webhookDeliveryLine(record: WebhookDeliveryRecord): string {
  return PREFIX + JSON.stringify(record);
}

/** The record a log line holds, or null for any other line. */
export function parseWebhookDeliveryLine(message: string): WebhookDeliveryRecord | null {
  if (!message.startsWith(PREFIX)) return null;
  try {
    const value = JSON.parse(message.slice(PREFIX.length)) as Partial<WebhookDeliveryRecord>;
    if (typeof value.webhook !== "string" || typeof value.verified !== "boolean") return null;
    if (value.delivery !== null && typeof value.delivery !== "string") return null;
    return value as WebhookDeliveryRecord;
  } catch {
    return null;
  }
}
