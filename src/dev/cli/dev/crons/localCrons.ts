import type { V4WorkerOptions } from "miniflare";
import { cronIsDue, UTC } from "../../../../core/cronSchedule.ts";

/** One cron trigger of a local platform's worker. */
export interface LocalCron {
  worker: string;
  cron: string;
}

/** Every cron trigger the local platform's workers carry (their configs' `[triggers] crons`). */
export function localCrons(workers: V4WorkerOptions[]): LocalCron[] {
  return workers.flatMap((worker) => (worker.cronTriggers ?? []).map((cron) => ({ worker: worker.name ?? "", cron })));
}

/**
 * The crons due in the minute of `scheduledTime` (UTC, seconds ignored, as
 * Cloudflare reads a cron trigger). Miniflare never fires a cron by itself:
 * `platform dev` asks every minute and runs these.
 */
export function dueCrons(crons: LocalCron[], scheduledTime: Date): LocalCron[] {
  return crons.filter(({ cron }) => cronIsDue({ cron, timezone: UTC }, scheduledTime.getTime()));
}
