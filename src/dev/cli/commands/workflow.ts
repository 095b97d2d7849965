import type { WorkflowRunView } from "../../../engine/execution/describeRun.ts";
import { isLiveStatus, type RunListPage } from "../../../engine/storage/store.ts";
import { type Command, cliOptions } from "../commandLine.ts";
import { callPlatformApi, resolvePlatformTarget } from "../platformTarget.ts";
import {
  formatFollowedRow,
  formatRunList,
  formatRunTimeline,
  timelineHeading,
  timelineRows,
  TIMELINE_HEADER,
  type RunSummaryWithPause,
} from "../workflow/formatTimeline.ts";
import { shortRunId } from "../dev/output/devLogLines.ts";
import { formatFailedAttempts } from "../workflow/failedAttempts.ts";
import { pauseNotice } from "../workflow/pauseNotice.ts";
import { resolveRunId } from "../workflow/resolveRunId.ts";
import { filterAsFlags } from "../workflow/runFilterArgs.ts";
import { parseWorkflowInvocation } from "../workflow/workflowArgs.ts";
import { watchCommand } from "../workflow/watchCommand.ts";
import { checkSchedulesInvocation, fetchScheduleRows, formatSchedules } from "../workflow/workflowSchedules.ts";

/** How often `start --wait` asks for the run's new events. */
const FOLLOW_INTERVAL_MS = 500;

interface StartedRun {
  runId: string;
  workflowId: string;
  name: string;
  created: boolean;
}

export const workflowCommand: Command = {
  summary: "Start, inspect, search, pause, rerun, cancel and send events to a project's workflow runs.",
  usage:
    "platform workflow list [filters] [--limit N] [--cursor c] [--full] | get <runId> | start <name> [--data JSON] [--id ID] [--idempotency-key K] [--priority 1-10] [--wait] | cancel <runId> [--reason R] | cancel <filters> [--reason R] [--yes] | rerun <runId> [--from-step S] | rerun <filters> [--from-step S] [--yes] | pause <runId> [--reason R] | resume <runId> | send <runId> <event> [--data JSON] | send <workflowId> <event> --start NAME [--start-data JSON] [--data JSON] | schedules [--full] | watch <runId> [--from N] [--topic T]   [--dir d] [--api URL] [--json]",
  help: `
list    runs newest first, in 100 columns: short run ids (--full shows them
        whole), status queued (with its flow control key and how many are
        ahead), running, sleeping, waiting (for an event, or for its child
        runs: how many have ended), paused, completed, failed or
        cancelled, and the step each is at; page with --limit and the
        --cursor it prints
get     one run's events as a timeline: step, attempt, duration, retries,
        sleeps, waits, events received, failure reason, version, rerun links
start   starts a registered workflow with --data (JSON) and prints the run id;
        --id sets the workflow id (one active run per id); --idempotency-key
        answers the first run started with that key within 24 hours, ended
        or not; --priority 1-10 (default 5) orders it among its flow
        control key's queued runs; --wait then prints
        the run's events as they happen and exits 0 when it completes, 1 when
        it fails or is cancelled
cancel  cancels a running, waiting, paused or queued run (workflow.cancel,
        which cancels a parent's active children too) with an
        optional --reason; with filters instead of a run id, prints how many
        runs match and cancels them only with --yes (workflow.cancelMany, at
        most 10,000)
rerun   starts a new run of a finished one with the same data; --from-step S
        keeps the steps before S (their writes) and begins by claiming S;
        with filters, reruns every finished run that matches, with --yes
pause   pauses a started run: it claims no new step until resume (a step in
        flight finishes); resume goes on, sleeps that fell due meanwhile at once
send    sends an event to a run (workflow.send) with --data as its payload;
        a run waiting for that event name continues with it; with --start
        NAME the first argument is a workflow id: the event goes to that id's
        active run, or a new run of NAME (with --start-data) is started with
        that id and the event as its first (start-or-send, atomic per id)
watch   prints a run's live stream (ctx.publish and the lifecycle on topic
        run) as it is published, from --from N (an offset; default 0), only
        --topic T (several: a,b); exits 0 when the run completes, 1 when it
        fails or is cancelled
schedules  the scheduled workflows (workflow(name, steps, { schedule })):
        cron, time zone, next tick and the latest run a tick started

Filters (list, cancel, rerun): --status queued|running|waiting|paused|completed|
failed|cancelled (waiting: a parent waiting for its child runs), --name N, --step S (where the run is, or ended), --since T and
--until T on the start time (T: 2h, 15m, 7d ago, epoch ms or an ISO date),
--error TEXT (in the failure reason), --id-prefix P, --version v3,
--rerun-of RUN.

A run id may be shortened to any unique prefix (as list and \`platform dev\`
show it). Targets the \`platform dev\` (workerd or --node) running for --dir
(default: the current directory), or --api URL with $PLATFORM_TOKEN. --json
prints the raw answer. Usage errors (e.g. --data that is not JSON) exit 2.`,
  options: cliOptions({
    strings: [
      "status",
      "name",
      "step",
      "since",
      "until",
      "error",
      "id-prefix",
      "version",
      "rerun-of",
      "from-step",
      "limit",
      "cursor",
      "data",
      "id",
      "idempotency-key",
      "priority",
      "start",
      "start-data",
      "reason",
      "dir",
      "api",
      "from",
      "topic",
    ],
    booleans: ["full", "wait", "json", "yes"],
  }),
  async run({ positionals, values }) {
    if (positionals[0] === "schedules") {
      checkSchedulesInvocation(positionals.slice(1), values);
      const rows = await fetchScheduleRows(resolvePlatformTarget(values));
      process.stdout.write(
        values.json ? `${JSON.stringify({ schedules: rows }, null, 2)}\n` : formatSchedules(rows, values),
      );
      return;
    }
    if (positionals[0] === "watch") return watchCommand(positionals.slice(1), values);
    const invocation = parseWorkflowInvocation(positionals, values);
    const target = resolvePlatformTarget(values);
    const runs = `/projects/${encodeURIComponent(target.slug)}/workflows`;
    const print = (answer: unknown, text: string) =>
      process.stdout.write(values.json ? `${JSON.stringify(answer, null, 2)}\n` : text);
    const getRun = (runId: string) =>
      callPlatformApi<WorkflowRunView>(target, "GET", `${runs}/${encodeURIComponent(runId)}`);
    const findRun = (given: string) =>
      resolveRunId(given, getRun, (cursor) =>
        callPlatformApi<RunListPage>(
          target,
          "GET",
          `${runs}?${new URLSearchParams({ limit: "100", ...(cursor ? { cursor } : {}) })}`,
        ),
      );

    /** A control call on a run, named by its id or a unique prefix of it. */
    const postToRun = async <T>(
      given: string,
      action: "cancel" | "events" | "pause" | "resume" | "rerun",
      body: unknown,
    ) => {
      const { runId } = await findRun(given);
      const answer = await callPlatformApi<T>(target, "POST", `${runs}/${encodeURIComponent(runId)}/${action}`, body);
      return { runId, answer };
    };
    switch (invocation.action) {
      case "list": {
        const query = invocation.query.size ? `?${invocation.query}` : "";
        const page = await callPlatformApi<RunListPage>(target, "GET", runs + query);
        if (values.json) return void print(page, "");
        // List rows do not say whether a running run sleeps or waits, what a queued one waits for, nor how many
        // children a waiting one has heard from; its view does.
        const rows = await Promise.all(
          page.runs.map(async (run): Promise<RunSummaryWithPause> => {
            if (run.status !== "running" && run.status !== "queued" && run.status !== "waiting") return run;
            const { wakeAt, waitingFor, waitingForRun, queued, waitingForChildren } = await getRun(run.id);
            return { ...run, wakeAt, waitingFor, waitingForRun, queued, waitingForChildren };
          }),
        );
        print(page, formatRunList(rows, { full: invocation.full }));
        if (page.cursor) console.log(`More: platform workflow list --cursor ${page.cursor}`);
        return;
      }
      case "get": {
        const { runId, found } = await findRun(invocation.runId);
        const run = found ?? (await getRun(runId));
        print(run, formatRunTimeline(run) + formatFailedAttempts(run));
        return;
      }
      case "start": {
        const started = await callPlatformApi<StartedRun>(target, "POST", runs, {
          name: invocation.name,
          ...(invocation.data === undefined ? {} : { data: invocation.data }),
          ...(invocation.id === undefined ? {} : { id: invocation.id }),
          ...(invocation.idempotencyKey === undefined ? {} : { idempotencyKey: invocation.idempotencyKey }),
          ...(invocation.priority === undefined ? {} : { priority: invocation.priority }),
        });
        if (!started.created)
          console.error(
            invocation.idempotencyKey === undefined
              ? `A run with workflow id ${started.workflowId} is already active: that run is ${started.runId}.`
              : `The idempotency key ${JSON.stringify(invocation.idempotencyKey)} answers an earlier run: ${started.runId}.`,
          );
        if (!invocation.wait) return void print(started, `${started.runId}\n`);
        if (!values.json) console.log(started.runId);
        // The name the user gave the run (--id) is the one a hint should repeat.
        const runRef = invocation.id ?? shortRunId(started.runId);
        const run = await follow(started.runId, getRun, values.json !== true, runRef);
        if (values.json) print(run, "");
        return run.status === "completed" ? 0 : 1;
      }
      case "cancel": {
        const { runId, answer } = await postToRun<{ run: WorkflowRunView }>(
          invocation.runId,
          "cancel",
          invocation.reason === undefined ? {} : { reason: invocation.reason },
        );
        print(answer, `Cancelled run ${runId}${invocation.reason ? ` (${invocation.reason})` : ""}.\n`);
        return;
      }
      case "pause": {
        const { runId, answer } = await postToRun<{ run: WorkflowRunView }>(
          invocation.runId,
          "pause",
          invocation.reason === undefined ? {} : { reason: invocation.reason },
        );
        print(answer, `Paused run ${runId} at step ${answer.run.step ?? "?"}: it claims no new step until resumed.\n`);
        return;
      }
      case "resume": {
        const { runId, answer } = await postToRun<{ run: WorkflowRunView }>(invocation.runId, "resume", {});
        print(answer, `Resumed run ${runId}.\n`);
        return;
      }
      case "rerun": {
        const { runId, answer } = await postToRun<StartedRun>(
          invocation.runId,
          "rerun",
          invocation.fromStep === undefined ? {} : { fromStep: invocation.fromStep },
        );
        print(
          answer,
          `Rerun of ${runId}${invocation.fromStep ? ` from step ${invocation.fromStep}` : ""}: run ${answer.runId}\n`,
        );
        return;
      }
      case "bulk": {
        const { kind, filter } = invocation;
        const options =
          kind === "cancel"
            ? invocation.reason === undefined
              ? {}
              : { reason: invocation.reason }
            : invocation.fromStep === undefined
              ? {}
              : { fromStep: invocation.fromStep };
        const body = { filter, ...options, ...(invocation.yes ? {} : { dryRun: true }) };
        const answer = await callPlatformApi<{ matched: number; affected: number }>(
          target,
          "POST",
          `${runs}/${kind}`,
          body,
        );
        const verb = kind === "cancel" ? "cancel" : "rerun";
        if (!invocation.yes)
          return void print(
            answer,
            `${answer.matched} run(s) match. Nothing was changed: to ${verb} them, run\n  platform workflow ${verb} ${filterAsFlags(filter)}${invocation.fromStep ? ` --from-step ${invocation.fromStep}` : ""} --yes\n`,
          );
        print(
          answer,
          `${answer.matched} run(s) matched; ${kind === "cancel" ? "cancelled" : "reran"} ${answer.affected}${answer.affected < answer.matched ? ` (the others ${kind === "cancel" ? "had finished" : "were not finished or could not be rerun"})` : ""}.\n`,
        );
        return;
      }
      case "send": {
        const { runId, answer } = await postToRun<{ accepted: boolean }>(invocation.runId, "events", {
          name: invocation.event,
          ...(invocation.payload === undefined ? {} : { payload: invocation.payload }),
        });
        print(answer, `Sent "${invocation.event}" to run ${runId}.\n`);
        return;
      }
      case "sendOrStart": {
        const answer = await callPlatformApi<{ runId: string; created: boolean }>(target, "POST", `${runs}/send`, {
          workflowId: invocation.workflowId,
          name: invocation.event,
          ...(invocation.payload === undefined ? {} : { payload: invocation.payload }),
          start: {
            name: invocation.start,
            ...(invocation.startData === undefined ? {} : { data: invocation.startData }),
          },
        });
        print(
          answer,
          answer.created
            ? `Started run ${answer.runId} of ${invocation.start} as "${invocation.workflowId}" with "${invocation.event}" as its first event.\n`
            : `Sent "${invocation.event}" to run ${answer.runId}, the active run of "${invocation.workflowId}".\n`,
        );
        return;
      }
    }
  },
};

/**
 * Polls a run until it is terminal, printing each new event as a timeline row (when `show`), what it
 * waits for or how long it sleeps whenever that changes, then its outcome.
 */
async function follow(
  runId: string,
  getRun: (runId: string) => Promise<WorkflowRunView>,
  show: boolean,
  runRef: string,
): Promise<WorkflowRunView> {
  let printed = 0;
  let notice: string | null = null;
  if (show) console.log(`\n${formatFollowedRow(TIMELINE_HEADER)}`);
  for (;;) {
    const run = await getRun(runId);
    const rows = timelineRows(run);
    if (show) for (const row of rows.slice(printed)) console.log(formatFollowedRow(row));
    printed = rows.length;
    const now = pauseNotice(run, runRef);
    if (show && now && now !== notice) console.log(now);
    notice = now;
    if (!isLiveStatus(run.status)) {
      if (show) console.log(`\n${timelineHeading(run).split("\n")[0]}`);
      return run;
    }
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
  }
}
