import { type CronSchedule, nextCronTick, UTC } from "../core/cronSchedule.ts";

/**
 * Workflow schedules as the platform records and shows them (beyond the
 * spec): a scheduled workflow is one cron of its project, named
 * `__schedule/<workflow>`, recorded at push with the project's other crons.
 * The API worker (`GET /projects/:slug/schedules`, `GET /projects/:slug`),
 * `platform dev --node`'s local API, the CLI and the console share this shape.
 */

const SCHEDULE_CRON_PREFIX = "__schedule/";

/** One scheduled workflow of a project. */
export interface ProjectSchedule {
  workflow: string;
  /** Five cron fields. */
  cron: string;
  /** IANA zone the cron is read in. */
  timezone: string;
  /** The cron to run by hand (`POST /projects/:slug/crons/:name/run`): it starts the latest tick's run if none was started. */
  cronName: string;
  /** The next tick (ISO 8601, UTC), or null when the schedule never fires again. */
  nextAt: string | null;
}

/** The name of the cron that starts `workflow`'s scheduled runs. */
export function scheduleCronName(workflow: string): string {
  return SCHEDULE_CRON_PREFIX + workflow;
}

/** The workflow a schedule's cron starts, or null for any other cron name. */
export function scheduledWorkflowOf(cronName: string): string | null {
  return cronName.startsWith(SCHEDULE_CRON_PREFIX) && cronName.length > SCHEDULE_CRON_PREFIX.length
    ? cronName.slice(SCHEDULE_CRON_PREFIX.length)
    : null;
}

/** The schedules among a project's crons, by workflow name, each with its next tick after `now` (epoch ms). */
export function projectSchedules(
  crons: readonly { name: string; schedule: string; timezone?: string }[],
  now: number,
): ProjectSchedule[] {
  const schedules: ProjectSchedule[] = [];
  for (const { name, schedule, timezone = UTC } of crons) {
    const workflow = scheduledWorkflowOf(name);
    if (workflow === null) continue;
    const cron: CronSchedule = { cron: schedule, timezone };
    const next = nextCronTick(cron, now);
    schedules.push({
      workflow,
      cron: schedule,
      timezone,
      cronName: name,
      nextAt: next === null ? null : new Date(next).toISOString(),
    });
  }
  return schedules.sort((a, b) => a.workflow.localeCompare(b.workflow));
}
