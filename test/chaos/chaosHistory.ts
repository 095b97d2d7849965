/** What a chaos run leaves behind: the runs' own logs, what the clients were told, and the ledger's attempts. */

export interface HistoryEvent {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
  at: number;
}

/** A run as `workflow.get` shows it (the parts the checker reads). */
export interface HistoryRun {
  id: string;
  workflowId: string;
  name: string;
  status: string;
  result?: unknown;
  events: HistoryEvent[];
}

/** A start or start-or-send the platform answered: the run it named must exist. */
export interface AcknowledgedStart {
  workflow: string;
  runId: string;
  idempotencyKey?: string;
}

/** An event a client sent, tagged with a unique token; `acknowledged` when the platform answered 2xx. */
export interface SentEvent {
  token: string;
  /** The run (`workflow.send(runId, …)`) or workflow id (start-or-send) it was sent to. */
  to: { runId: string } | { workflowId: string };
  acknowledged: boolean;
}

/** A client request the platform never answered (2xx or 4xx) before the clients' deadline, with the last failure. */
export interface UnansweredRequest {
  path: string;
  last: string;
}

/** One step attempt as the step itself reported it to the external ledger (at-least-once). */
export interface LedgerAttempt {
  runId: string;
  step: string;
  attempt: number;
  /** The project build that ran it (the chaos project's `BUILD`; a push makes the next one). */
  build?: number;
}

export interface ChaosHistory {
  runs: HistoryRun[];
  starts: AcknowledgedStart[];
  sends: SentEvent[];
  unanswered: UnansweredRequest[];
  ledger: LedgerAttempt[];
  /** Workflows under a concurrency limit (one key each in the chaos project). */
  concurrency: { workflow: string; limit: number }[];
  /** Workflows with rollbacks: the steps that have a handler (each logs `rollback:<step>` in the ledger). */
  rollbacks: { workflow: string; steps: string[] }[];
  /** The builds pushed mid-run (the `up` backend), each with when its push had answered (epoch ms). */
  pushes: { build: number; at: number }[];
}
