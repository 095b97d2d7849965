import type { ProjectSchedule } from "../../../contracts/workflowSchedules.ts";
import type { RunListPage, RunSummary } from "../../../engine/storage/store.ts";
import { CliError } from "../commandLine.ts";
import { callPlatformApi, type PlatformTarget } from "../platformTarget.ts";
import { SHORT_RUN_ID, table, utc } from "./formatTimeline.ts";

/**
 * `platform workflow schedules`: the project's scheduled
 * workflows with their cron, zone and next tick, and the latest run a tick
 * started (looked for among the workflow's last {@link LAST_RUN_WINDOW} runs).
 */

/** How many of a workflow's newest runs are searched for its latest scheduled one. */
const LAST_RUN_WINDOW = 100;

/** Options `schedules` takes besides the targeting ones (--dir, --api, --json). */
const SCHEDULES_OPTIONS = ["full"];
const TARGET_OPTIONS = ["dir", "api", "json"];

export interface ScheduleRow extends ProjectSchedule {
  /** The newest run a tick started, or null when none is among the workflow's last runs. */
  lastRun: RunSummary | null;
}

/** Checks `platform workflow schedules …`; usage errors exit 2. */
export function checkSchedulesInvocation(args: string[], values: Record<string, string | boolean | undefined>): void {
  if (args.length > 0) throw new CliError(`Unexpected arguments: ${args.join(" ")}`, 2);
  const misplaced = Object.keys(values).find(
    (option) => values[option] !== undefined && ![...SCHEDULES_OPTIONS, ...TARGET_OPTIONS].includes(option),
  );
  if (misplaced) throw new CliError(`platform workflow schedules does not take --${misplaced}.`, 2);
}

/** Whether `run` is one a tick of `workflow`'s schedule started (its workflow id is `<name>@<tick>`). */
function isScheduledRun(workflow: string, run: RunSummary): boolean {
  return run.name === workflow && run.workflowId.startsWith(`${workflow}@`);
}

/** Asks the platform for the schedules and each one's latest scheduled run. */
export async function fetchScheduleRows(target: PlatformTarget): Promise<ScheduleRow[]> {
  const project = `/projects/${encodeURIComponent(target.slug)}`;
  const { schedules } = await callPlatformApi<{ schedules: ProjectSchedule[] }>(target, "GET", `${project}/schedules`);
  return Promise.all(
    schedules.map(async (schedule) => {
      const query = new URLSearchParams({ name: schedule.workflow, limit: String(LAST_RUN_WINDOW) });
      const page = await callPlatformApi<RunListPage>(target, "GET", `${project}/workflows?${query}`);
      return { ...schedule, lastRun: page.runs.find((run) => isScheduledRun(schedule.workflow, run)) ?? null };
    }),
  );
}

/** The schedules as a table: workflow, cron, zone, next tick (UTC), and the latest scheduled run with its tick. */
export function formatSchedules(rows: ScheduleRow[], options: { full?: boolean } = {}): string {
  if (rows.length === 0)
    return 'This project has no scheduled workflows: give one a schedule with workflow(name, steps, { schedule: "0 * * * *" }).\n';
  const lines = [["workflow", "cron", "timezone", "next tick", "last scheduled run"]];
  for (const row of rows) {
    const last = row.lastRun;
    const tick = last ? last.workflowId.slice(row.workflow.length + 1) : "";
    lines.push([
      row.workflow,
      row.cron,
      row.timezone,
      row.nextAt === null ? "never" : utc(Date.parse(row.nextAt)),
      last
        ? `${options.full ? last.id : last.id.slice(0, SHORT_RUN_ID)} ${last.status} (tick ${tick.replace(/\.000Z$/, "Z")})`
        : "none yet",
    ]);
  }
  return `${table(lines)}\n`;
}
