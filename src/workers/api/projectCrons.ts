import { Cron } from "croner";
import { PlatformError } from "../../core/errors.ts";
import { callProjectWorker } from "../dispatch/callProjectWorker.ts";
import type { Dispatcher } from "../dispatch/dispatcher.ts";
import { listAllProjectCrons, type ProjectCron } from "../db/projectCronsTable.ts";

const MAX_CRONS = 50;

export function validateMetadataCrons(value: unknown): ProjectCron[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > MAX_CRONS) {
    throw new PlatformError(
      "invalid_input",
      `crons must be an array of at most ${MAX_CRONS} { name, schedule } entries.`,
    );
  }
  const crons = value.map((entry) => {
    const { name, schedule } = (entry ?? {}) as Record<string, unknown>;
    if (typeof name !== "string" || !/^[A-Za-z0-9_-]{1,64}$/.test(name)) {
      throw new PlatformError("invalid_input", "Each cron needs a name of 1–64 letters, digits, '-' or '_'.");
    }
    if (typeof schedule !== "string" || !isValidSchedule(schedule)) {
      throw new PlatformError(
        "invalid_input",
        `Cron "${name}" has an invalid schedule; use five cron fields, e.g. "* * * * *".`,
      );
    }
    return { name, schedule };
  });
  const duplicate = crons.find((c, i) => crons.findIndex((other) => other.name === c.name) !== i);
  if (duplicate)
    throw new PlatformError("invalid_input", `Cron names must be unique; "${duplicate.name}" appears twice.`);
  return crons;
}

function isValidSchedule(schedule: string): boolean {
  if (schedule.trim().split(/\s+/).length !== 5) return false;
  try {
    new Cron(schedule, { paused: true });
    return true;
  } catch {
    return false;
  }
}

/** A cron fires in the minute that contains `scheduledTime` (seconds are ignored). */
export function cronIsDue(schedule: string, scheduledTime: number): boolean {
  const minute = new Date(Math.floor(scheduledTime / 60_000) * 60_000);
  return new Cron(schedule, { paused: true, timezone: "UTC" }).match(minute);
}

/**
 * The platform's every-minute trigger: runs each project's due crons through
 * the project's internal `/__cron/<name>` route and reports what happened.
 */
export async function runDueCrons(
  db: D1Database,
  dispatcher: Dispatcher,
  scheduledTime: number,
): Promise<{ project: string; cron: string; status: number | "error"; output?: string }[]> {
  const due = (await listAllProjectCrons(db)).filter((row) => cronIsDue(row.cron_schedule, scheduledTime));
  return Promise.all(
    due.map(async (row) => {
      try {
        const response = await callProjectWorker(
          dispatcher,
          row,
          "POST",
          `/__cron/${encodeURIComponent(row.cron_name)}`,
        );
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
