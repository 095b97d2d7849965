import { Cron } from "croner";

/**
 * A five-field cron expression read in an IANA time zone: the one home of the
 * platform's cron arithmetic (which minutes are ticks, the tick a delivery
 * belongs to, the next tick), shared by the API worker's scheduler, workflow
 * schedules and the local platform.
 *
 * The ticks are croner's sequence of runs, whose daylight-saving rules are
 * those of Vixie cron: a fixed-time schedule (single minute and hour, e.g.
 * "30 2 * * *") whose time falls in a spring-forward gap fires at the first
 * minute after the gap, and once when its time occurs twice in the autumn; an
 * interval schedule ("*\/30 * * * *", "0 * * * *") skips the minutes of a gap
 * and fires on both passes of a repeated hour, as elapsed time says it should.
 */
export interface CronSchedule {
  /** Five fields: minute, hour, day of month, month, day of week. */
  cron: string;
  /** A canonical IANA zone name, e.g. "UTC", "Europe/Berlin". */
  timezone: string;
}

export const UTC = "UTC";

const MINUTE_MS = 60_000;

function cronOf({ cron, timezone }: CronSchedule): Cron {
  return new Cron(cron, { paused: true, timezone, mode: "5-part" });
}

/** The start of the minute that contains `time` (epoch ms): cron has no finer grain than the minute. */
export function minuteOf(time: number): number {
  return Math.floor(time / MINUTE_MS) * MINUTE_MS;
}

/** The zone's canonical name (e.g. "europe/berlin" → "Europe/Berlin"), or null when the runtime knows no such zone. */
export function canonicalTimezone(timezone: string): string | null {
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/**
 * Why `cron` is not a schedule the platform runs (a sentence ending without a period), or null when it
 * is: exactly five fields that croner parses, with at least one tick to come in `timezone`.
 */
export function cronScheduleProblem(cron: string, timezone = UTC): string | null {
  if (cron.trim().split(/\s+/).length !== 5)
    return `${JSON.stringify(cron)} is not a cron expression of five fields (minute hour day-of-month month day-of-week), e.g. "0 * * * *"`;
  try {
    if (cronOf({ cron, timezone }).nextRun() === null) return `${JSON.stringify(cron)} never fires`;
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, "") : String(error);
    return `${JSON.stringify(cron)} is not a valid cron expression: ${reason}`;
  }
  return null;
}

/**
 * The tick a delivery at `time` belongs to: the latest tick at or before the minute that contains
 * `time` (epoch ms), or null when there is none. For a delivery in a tick's own minute (the platform
 * delivers each due minute, late or more than once) this is that minute, whenever it arrives.
 */
export function cronTickAt(schedule: CronSchedule, time: number): number | null {
  // previousRuns counts runs strictly before its reference: the next minute's start includes this one.
  const [tick] = cronOf(schedule).previousRuns(1, new Date(minuteOf(time) + MINUTE_MS));
  return tick ? tick.getTime() : null;
}

/** Whether the minute that contains `time` is a tick of `schedule` (seconds ignored, as a cron trigger reads it). */
export function cronIsDue(schedule: CronSchedule, time: number): boolean {
  return cronTickAt(schedule, time) === minuteOf(time);
}

/** The first tick strictly after `time` (epoch ms), or null when the schedule never fires again. */
export function nextCronTick(schedule: CronSchedule, time: number): number | null {
  return cronOf(schedule).nextRun(new Date(time))?.getTime() ?? null;
}
