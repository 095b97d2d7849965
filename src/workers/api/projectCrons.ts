import { canonicalTimezone, cronIsDue as isDueIn, cronScheduleProblem, UTC } from "../../core/cronSchedule.ts";
import { PlatformError } from "../../core/errors.ts";
import { cronDeliveryBody } from "../../contracts/cronDelivery.ts";
import { scheduledWorkflowOf } from "../../contracts/workflowSchedules.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import { listAllProjectCrons, type ProjectCron } from "../db/projectCronsTable.ts";

const MAX_CRONS = 50;
/** Workflow schedules (`__schedule/…` crons) per project: the shared minute scheduler reads every one of every project. */
export const MAX_SCHEDULES = 20;
/** A cron string's length: five fields fit in far less; the scheduler parses each one every minute. */
export const MAX_CRON_LENGTH = 256;
/** A cron's own name, or a workflow schedule's `__schedule/<workflow>` (workflow names as the engine allows them). */
const CRON_NAME = /^(?:[A-Za-z0-9_-]{1,64}|__schedule\/[A-Za-z0-9][A-Za-z0-9_.-]{0,63})$/;

export function validateMetadataCrons(value: unknown): ProjectCron[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_CRONS) {
    throw new PlatformError(
      "invalid_input",
      `crons must be an array of at most ${MAX_CRONS} { name, schedule, timezone? } entries.`,
    );
  }
  const schedules = value.filter((entry) => {
    const name = ((entry ?? {}) as Record<string, unknown>).name;
    return typeof name === "string" && scheduledWorkflowOf(name) !== null;
  });
  if (schedules.length > MAX_SCHEDULES) {
    throw new PlatformError(
      "invalid_input",
      `A project may have at most ${MAX_SCHEDULES} workflow schedules; this push has ${schedules.length}.`,
    );
  }
  const crons = value.map((entry): ProjectCron => {
    const { name, schedule, timezone } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !CRON_NAME.test(name)) {
      throw new PlatformError(
        "invalid_input",
        "Each cron needs a name of 1–64 letters, digits, '-' or '_' (or __schedule/<workflow name>).",
      );
    }
    const zone = timezone === undefined ? UTC : typeof timezone === "string" ? canonicalTimezone(timezone) : null;
    if (zone === null) {
      throw new PlatformError(
        "invalid_input",
        `Cron "${name}" has an unknown timezone ${JSON.stringify(timezone)}; use an IANA zone name such as "Europe/Berlin".`,
      );
    }
    if (typeof schedule === "string" && schedule.length > MAX_CRON_LENGTH) {
      throw new PlatformError(
        "invalid_input",
        `Cron "${name}" has a schedule of ${schedule.length} characters; the limit is ${MAX_CRON_LENGTH}.`,
      );
    }
    if (typeof schedule !== "string" || cronScheduleProblem(schedule, zone) !== null) {
      throw new PlatformError(
        "invalid_input",
        `Cron "${name}" has an invalid schedule; use five cron fields, e.g. "* * * * *".`,
      );
    }
    return zone === UTC ? { name, schedule } : { name, schedule, timezone: zone };
  });
  const duplicate = crons.find((c, i) => crons.findIndex((other) => other.name === c.name) !== i);
  if (duplicate)
    throw new PlatformError("invalid_input", `Cron names must be unique; "${duplicate.name}" appears twice.`);
  return crons;
}

/** A cron fires in the minute that contains `scheduledTime` (seconds are ignored) when that minute is one of its ticks in `timezone`. */
export function cronIsDue(schedule: string, scheduledTime: number, timezone = UTC): boolean {
  return isDueIn({ cron: schedule, timezone }, scheduledTime);
}

/**
 * The platform's every-minute trigger: runs each project's due crons through
 * the project's internal `/__cron/<name>` route and reports what happened.
 * Each call carries `scheduledTime` (the minute this trigger was scheduled
 * for, however late it runs), from which a workflow schedule names its tick.
 */
export async function runDueCrons(
  db: D1Database,
  dispatcher: Dispatcher,
  scheduledTime: number,
): Promise<{ project: string; cron: string; status: number | "error"; output?: string }[]> {
  const due = (await listAllProjectCrons(db)).filter((row) =>
    cronIsDue(row.cron_schedule, scheduledTime, row.cron_timezone),
  );
  const delivery = cronDeliveryBody(scheduledTime);
  return Promise.all(
    due.map(async (row) => {
      try {
        const response = await callProjectWorker(dispatcher, row, {
          method: "POST",
          pathAndQuery: `/__cron/${encodeURIComponent(row.cron_name)}`,
          body: delivery,
        });
        const output = cronOutput(await response.text()).slice(0, 500);
        console.log(`cron ${row.slug}/${row.cron_name}: ${response.status} ${output}`);
        return { project: row.slug, cron: row.cron_name, status: response.status, output };
      } catch (error) {
        console.error(`cron ${row.slug}/${row.cron_name} failed:`, error);
        return { project: row.slug, cron: row.cron_name, status: "error" as const };
      }
    }),
  );
}

/** What a cron said: the `output` of the project's `{ cron, output }` answer, else its body as it came. */
function cronOutput(body: string): string {
  try {
    const { output } = JSON.parse(body) as { output?: unknown };
    if (typeof output === "string") return output;
  } catch {
    // not JSON: an error page or text
  }
  return body;
}
