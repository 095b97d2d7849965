import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DevProcess,
  initProject,
  RUN_ROUTES,
  type RunView,
  removeWorkDir,
  runCli,
  shape,
  startDev,
} from "../support/e2e/index.ts";

// Issue 23's "Done when" for scheduled starts: a workflow with schedule "* * * * *" under `platform dev`
// (workerd) and `platform dev --node` starts exactly one run per minute, its workflow id `<name>@<tick>`,
// watched in real time with `platform workflow list` and `platform workflow schedules`. Both servers run
// side by side, so the three minutes pass once for both. Ports of this file: 8990 (workerd), 8991 (Node).
// Only ticks after a server printed Ready and at or before the listing count: a tick during start-up may
// or may not have been delivered.
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-schedule-"));
afterAll(() => removeWorkDir(work));

const MINUTE_MS = 60_000;
/** Ticks that must pass after Ready before the runs are listed. */
const FULL_TICKS = 3;
/** How long after a tick its run may take to start and complete on a loaded machine before the listing goes on without it. */
const TICK_SETTLE_MS = 45_000;

const PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

// Started by its schedule alone; each run's result is the data its tick started it with.
workflow("heartbeat", { start: async (ctx) => ({ done: true, result: ctx.data }) }, { schedule: "* * * * *" });
${RUN_ROUTES}`;

/** What `platform workflow list --json` answers (the parts read here). */
interface RunRow {
  id: string;
  workflowId: string;
  name: string;
  status: string;
}

/** A row of `platform workflow schedules --json`. */
interface ScheduleRow {
  workflow: string;
  cron: string;
  timezone: string;
  cronName: string;
  nextAt: string | null;
  lastRun: RunRow | null;
}

const SCHEDULED_ID = /^heartbeat@(\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z)$/;

const iso = (at: number) => new Date(at).toISOString();
const minuteOf = (at: number) => Math.floor(at / MINUTE_MS) * MINUTE_MS;
const scheduledId = (tick: number) => `heartbeat@${iso(tick)}`;

/** The minute ticks in (after, until]. */
function ticksBetween(after: number, until: number): number[] {
  const ticks = [];
  for (let tick = minuteOf(after) + MINUTE_MS; tick <= until; tick += MINUTE_MS) ticks.push(tick);
  return ticks;
}

/** The tick a scheduled run is for, read from its workflow id. */
function tickOf(run: RunRow): number {
  const match = SCHEDULED_ID.exec(run.workflowId);
  if (!match) throw new Error(`${run.id} has the workflow id "${run.workflowId}", not heartbeat@<minute>`);
  return Date.parse(match[1]!);
}

async function workflowJson<T>(dir: string, ...args: string[]): Promise<T> {
  const result = await runCli(["workflow", ...args, "--json", "--dir", dir]);
  if (result.code !== 0) throw new Error(`platform workflow ${args.join(" ")} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

async function listHeartbeats(dir: string): Promise<RunRow[]> {
  const page = await workflowJson<{ runs: RunRow[]; cursor?: string }>(
    dir,
    "list",
    "--name",
    "heartbeat",
    "--limit",
    "100",
  );
  expect(page.cursor).toBeUndefined();
  return page.runs;
}

/**
 * The heartbeat runs, listed once {@link FULL_TICKS} ticks after `readyAt` have passed and the latest tick's
 * run has completed (or had {@link TICK_SETTLE_MS} to), every run ended, and no tick fell during the
 * listing: then every tick at or before `listedAt` had its chance to start a run, and none after it did.
 */
async function listAfterTicks(dir: string, readyAt: number): Promise<{ runs: RunRow[]; listedAt: number }> {
  const lastNeeded = minuteOf(readyAt) + FULL_TICKS * MINUTE_MS;
  const deadline = lastNeeded + 3 * MINUTE_MS;
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`Runs still not settled at ${iso(Date.now())}: ${JSON.stringify(await listHeartbeats(dir))}`);
    const wait = lastNeeded - Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(1_000, wait)));
    const listedAt = Date.now();
    const runs = await listHeartbeats(dir);
    const latest = minuteOf(listedAt);
    if (latest < lastNeeded || minuteOf(Date.now()) !== latest) continue;
    if (runs.some((run) => run.status === "running" || run.status === "queued")) continue;
    const latestDone = runs.some((run) => run.workflowId === scheduledId(latest) && run.status === "completed");
    if (latestDone || listedAt > latest + TICK_SETTLE_MS) return { runs, listedAt };
  }
}

describe("a workflow with schedule * * * * *", () => {
  const servers = [
    { mode: "platform dev (workerd)", flags: [] as string[], port: 8990 },
    { mode: "platform dev --node", flags: ["--node"], port: 8991 },
  ].map((server) => ({ ...server, dir: path.join(work, `schedule-${server.port}`) }));
  const started = new Map<string, { dev: DevProcess; readyAt: number }>();

  beforeAll(async () => {
    for (const { mode, flags, port, dir } of servers) {
      await initProject(dir, PROJECT);
      const dev = await startDev([dir, ...flags, "--port", String(port)], { readyTimeoutMs: 120_000 });
      started.set(mode, { dev, readyAt: Date.now() });
    }
  }, 300_000);
  afterAll(async () => {
    for (const { dev } of started.values()) await dev.stop("SIGTERM");
  });

  it.each(servers)(
    "under $mode starts one run per minute tick, heartbeat@<tick>, each completed with { scheduledAt: <tick> }",
    async ({ mode, dir }) => {
      const { readyAt } = started.get(mode)!;
      const { runs, listedAt } = await listAfterTicks(dir, readyAt);
      const ticks = ticksBetween(readyAt, listedAt);
      const seen = runs.map((run) => run.workflowId).sort();
      console.log(`${mode}: ready ${iso(readyAt)}, listed ${iso(listedAt)}, runs ${seen.join(" ")}`);
      expect(ticks.length).toBeGreaterThanOrEqual(FULL_TICKS);

      // No run twice for a tick, none for a tick still to come; a start-up tick is the only one that may be missing.
      expect(new Set(seen).size).toBe(seen.length);
      expect(new Set(runs.map((run) => run.id)).size).toBe(runs.length);
      expect(runs.filter((run) => tickOf(run) > listedAt)).toEqual([]);
      // Exactly one run for each tick since Ready: consecutive minutes, no duplicates, no gaps.
      const counted = runs.filter((run) => tickOf(run) > readyAt);
      expect(counted.map((run) => run.workflowId).sort()).toEqual(ticks.map(scheduledId));

      for (const run of counted) {
        expect(run, run.workflowId).toMatchObject({ name: "heartbeat", status: "completed" });
        const view = await workflowJson<RunView>(dir, "get", run.id);
        expect(view.result).toEqual({ scheduledAt: iso(tickOf(run)) });
        expect(shape(view.events)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "step_completed(start)",
          "workflow_completed",
        ]);
      }
    },
    420_000,
  );

  it.each(servers)(
    "platform workflow schedules under $mode shows the schedule, its next tick and its last run",
    async ({ dir }) => {
      const before = Date.now();
      const { schedules } = await workflowJson<{ schedules: ScheduleRow[] }>(dir, "schedules");
      const after = Date.now();
      expect(schedules).toHaveLength(1);
      const [row] = schedules;
      expect(row).toMatchObject({
        workflow: "heartbeat",
        cron: "* * * * *",
        timezone: "UTC",
        cronName: "__schedule/heartbeat",
      });
      // The next tick from when the API answered: the minute after `before`, or after `after` if one fell between.
      expect([iso(minuteOf(before) + MINUTE_MS), iso(minuteOf(after) + MINUTE_MS)]).toContain(row!.nextAt);
      // The latest scheduled run so far (a tick that fell during the call may not have started its run yet).
      expect(row!.lastRun).toMatchObject({ name: "heartbeat" });
      expect([
        scheduledId(minuteOf(before)),
        scheduledId(minuteOf(before) - MINUTE_MS),
        scheduledId(minuteOf(after)),
      ]).toContain(row!.lastRun!.workflowId);

      const table = await runCli(["workflow", "schedules", "--dir", dir]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toMatch(/^workflow\s+cron\s+timezone\s+next tick\s+last scheduled run$/m);
      expect(table.stdout).toMatch(
        /^heartbeat\s+\* \* \* \* \*\s+UTC\s+\d{4}-\d\d-\d\dT\d\d:\d\d:00Z\s+\S+ (completed|running|queued) \(tick \d{4}-\d\d-\d\dT\d\d:\d\d:00Z\)$/m,
      );
    },
  );
});
