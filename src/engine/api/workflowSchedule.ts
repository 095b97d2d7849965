import { canonicalTimezone, type CronSchedule, cronScheduleProblem, cronTickAt, UTC } from "../../core/cronSchedule.ts";
import { PlatformError } from "../../core/errors.ts";

/**
 * Scheduled starts: `workflow(name, steps, { schedule })`
 * starts one run per tick of a cron schedule. Each scheduled workflow is one
 * cron of the project (`__schedule/<name>`), registered as the recovery cron
 * is and run by the platform's scheduler; each tick starts the run whose
 * workflow id is `<name>@<tick as ISO time>` with the data `{ scheduledAt }`,
 * and a workflow id names at most one scheduled run ever (see `once` in
 * createRun.ts), so a tick delivered twice, or late, starts one run.
 */

/**
 * The `schedule` option: five cron fields read in UTC, or `{ cron, timezone }` with an IANA zone.
 * @example
 * const schedule: WorkflowScheduleOption = { cron: "0 9 * * 1-5", timezone: "Europe/Berlin" };
 * workflow("standup", steps, { schedule });
 */
export type WorkflowScheduleOption = string | { cron: string; timezone?: string };

/** A checked schedule: the cron with its fields separated by single spaces, the zone by its canonical name. */
export type WorkflowSchedule = Readonly<CronSchedule>;

/**
 * The data a scheduled run starts with.
 * @example
 * workflow<ScheduledStartData>("nightly", {
 *   start: async (ctx) => ({ done: true, result: `report for ${ctx.data.scheduledAt}` }),
 * }, { schedule: "0 2 * * *" });
 */
export interface ScheduledStartData {
  /** The tick (ISO 8601, UTC) this run is for: the scheduled minute, not the time it was delivered. */
  scheduledAt: string;
}

/** What one delivery of a schedule's cron starts. */
export interface ScheduledStart {
  tick: number;
  workflowId: string;
  data: ScheduledStartData;
}

/** The workflow id of `workflow`'s run for `tick` (epoch ms): `<name>@<ISO time>`. */
export function scheduledWorkflowId(workflow: string, tick: number): string {
  return `${workflow}@${new Date(tick).toISOString()}`;
}

/**
 * Checks `workflow(name, …, { schedule })`; throws `invalid_input` naming the bad part, so a build that
 * evaluates the project fails with the reason. Undefined means no schedule.
 */
export function toWorkflowSchedule(name: string, option: unknown): WorkflowSchedule | null {
  if (option === undefined) return null;
  const example = `e.g. "0 * * * *" (hourly, UTC) or { cron: "0 9 * * 1-5", timezone: "Europe/Berlin" }`;
  let cron: unknown = option;
  let timezone: unknown = UTC;
  if (typeof option === "object" && option !== null && !Array.isArray(option)) {
    const unknownKey = Object.keys(option).find((key) => key !== "cron" && key !== "timezone");
    if (unknownKey !== undefined)
      throw invalid(`workflow("${name}") schedule has an unknown option "${unknownKey}"; use { cron, timezone }`);
    ({ cron, timezone = UTC } = option as { cron?: unknown; timezone?: unknown });
  } else if (typeof option !== "string") {
    throw invalid(`workflow("${name}") schedule must be a cron string or { cron, timezone }, ${example}`);
  }
  if (typeof cron !== "string") throw invalid(`workflow("${name}") schedule needs a cron string, ${example}`);
  if (typeof timezone !== "string")
    throw invalid(`workflow("${name}") schedule timezone must be an IANA zone name such as "Europe/Berlin"`);
  const zone = canonicalTimezone(timezone);
  if (zone === null)
    throw invalid(
      `workflow("${name}") schedule timezone ${JSON.stringify(timezone)} is not an IANA time zone; use a name such as "UTC", "Europe/Berlin" or "America/New_York"`,
    );
  const fields = cron.trim().split(/\s+/).join(" ");
  const problem = cronScheduleProblem(fields, zone);
  if (problem !== null) throw invalid(`workflow("${name}") schedule ${problem}`);
  return Object.freeze({ cron: fields, timezone: zone });
}

/**
 * The start a delivery of `workflow`'s schedule at `deliveredAt` (epoch ms) makes: its tick is the
 * latest tick at or before the delivered minute. The platform delivers the minute it scheduled (a
 * cron trigger's `scheduledTime`), so a late or repeated delivery names the same tick; a manual run
 * names the latest tick so far. Null when the schedule has not fired yet.
 */
export function scheduledStartAt(
  workflow: string,
  schedule: WorkflowSchedule,
  deliveredAt: number,
): ScheduledStart | null {
  const tick = cronTickAt(schedule, deliveredAt);
  if (tick === null) return null;
  return {
    tick,
    workflowId: scheduledWorkflowId(workflow, tick),
    data: { scheduledAt: new Date(tick).toISOString() },
  };
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}
