import { PlatformError } from "../core/errors.ts";
import { parseJsonObject } from "../core/web/jsonBody.ts";

/**
 * The body of the platform's `POST /__cron/<name>` to a project worker: the
 * minute the scheduler delivers (a cron trigger's `scheduledTime`, epoch ms),
 * which a schedule's cron turns into its tick. Empty when someone runs the
 * cron by hand (`POST /projects/:slug/crons/:name/run`): the project then
 * reads its own clock.
 */
export interface CronDelivery {
  scheduledTime?: number;
}

export function cronDeliveryBody(scheduledTime: number): string {
  return JSON.stringify({ scheduledTime } satisfies CronDelivery);
}

/** `{ scheduledTime? }`, an integer of epoch ms; an empty body is `{}`. */
export function parseCronDelivery(bytes: Uint8Array | null): CronDelivery {
  if (bytes === null || bytes.byteLength === 0) return {};
  const { scheduledTime, ...rest } = parseJsonObject(bytes);
  const unknown = Object.keys(rest)[0];
  if (unknown !== undefined)
    throw new PlatformError("invalid_input", `A cron delivery takes only scheduledTime; unknown field "${unknown}".`);
  if (scheduledTime === undefined) return {};
  if (!Number.isSafeInteger(scheduledTime) || (scheduledTime as number) < 0)
    throw new PlatformError("invalid_input", "scheduledTime must be a time in epoch milliseconds.");
  return { scheduledTime: scheduledTime as number };
}
