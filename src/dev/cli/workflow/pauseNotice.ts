import type { WorkflowRunView } from "../../../engine/execution/describeRun.ts";
import { utc } from "./formatTimeline.ts";

/**
 * What `workflow start --wait` says while a running run is paused between
 * two steps, so a wait for an event does not look like a hang: the event's
 * name and how to send it, or when a sleep ends. Null when the run is not
 * paused (or not running). `runRef` is how the user names the run.
 */
export function pauseNotice(run: WorkflowRunView, runRef: string): string | null {
  if (run.status !== "running") return null;
  if (run.waitingFor) {
    const timeout = run.waitingFor.timeoutAt === undefined ? "" : ` (until ${utc(run.waitingFor.timeoutAt)})`;
    return `Waiting for the event "${run.waitingFor.name}"${timeout}: send it with \`platform workflow send ${runRef} ${run.waitingFor.name} [--data JSON]\`.`;
  }
  if (run.waitingForRun) {
    const timeout = run.waitingForRun.timeoutAt === undefined ? "" : ` (until ${utc(run.waitingForRun.timeoutAt)})`;
    return `Waiting for run ${run.waitingForRun.runId} to end${timeout}.`;
  }
  if (run.wakeAt !== undefined) return `Sleeping until ${utc(run.wakeAt)}.`;
  return null;
}
