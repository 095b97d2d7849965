import type { RerunOf } from "./events.ts";

/**
 * A run's status. `cancelled` and `paused` come from `workflow.cancel` and
 * `workflow.pause`; `queued` is a run under flow control (flowControl.ts)
 * waiting for its turn; `waiting` is a parent parked on the children its last
 * step started, from that step's step_completed until it claims its next
 * step (its last child's end wakes it at once). A run that sleeps or waits
 * for an event is `running`. Live runs are `queued`, `running`, `waiting`
 * or `paused`; the others are terminal. A later status is added here and to
 * {@link LIVE_STATUSES} or {@link TERMINAL_STATUSES}; the stores and the
 * index read these lists.
 */
export const RUN_STATUSES = ["queued", "running", "waiting", "paused", "completed", "failed", "cancelled"] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const LIVE_STATUSES = ["queued", "running", "waiting", "paused"] as const satisfies readonly RunStatus[];
export const TERMINAL_STATUSES = ["completed", "failed", "cancelled"] as const satisfies readonly RunStatus[];
/**
 * Started and not paused: the runs an executor drives (the recovery sweep
 * looks at these) and that hold a flow-control slot.
 */
export const ACTIVE_STATUSES = ["running", "waiting"] as const satisfies readonly RunStatus[];

export function isLiveStatus(status: RunStatus): boolean {
  return (LIVE_STATUSES as readonly RunStatus[]).includes(status);
}

export function isActiveStatus(status: RunStatus): boolean {
  return (ACTIVE_STATUSES as readonly RunStatus[]).includes(status);
}

/** One run as listed by `workflow.list`. */
export interface RunSummary {
  id: string;
  workflowId: string;
  name: string;
  status: RunStatus;
  /**
   * The run's position, the step it is in or will claim
   * next (`start` before its first step); once it ended, the step it ended
   * in. Every store sets it (optional only for summaries made by hand).
   */
  step?: string;
  /** The project version whose code started the run (absent where the host has none). */
  version?: string;
  /** The failure reason, when the run failed. */
  error?: string;
  /** The run `workflow.rerun` made this one of. */
  rerunOf?: RerunOf;
  /** Epoch ms of workflow_created. */
  createdAt: number;
  /** Epoch ms of the last event. */
  updatedAt: number;
  /** When a finished run is deleted (its end + the workflow's `retentionMS`). */
  expiresAt?: number;
}

/**
 * A summary as a run's actor reports it to the project's index: with the
 * seq of the run's last event then, so that of two reports of one run that
 * arrive out of order the older one changes nothing.
 */
export interface RunReport extends RunSummary {
  step: string;
  lastSeq: number;
}

/** How many live runs of a workflow are at a step (the stranded-runs check's input). */
export interface LivePosition {
  name: string;
  step: string;
  runs: number;
}
