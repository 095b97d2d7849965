import { PlatformError } from "../core/errors.ts";
import type { Clock } from "../engine/api/clock.ts";
import { systemClock } from "../engine/api/clock.ts";
import type { WorkflowBackend } from "../engine/api/workflowApi.ts";
import { type LiveRunSlots, platformLiveRunSlots } from "./liveRunSlots.ts";

/** What the run index actor's bulk operations do to one run. */
export type RunControls = Pick<WorkflowBackend, "cancel" | "rerun">;

/**
 * What the workflow actors need from the project worker that hosts them. The
 * runtime's workflow capability fills it in when it loads (before any actor
 * is made), so the actors depend on no runtime module; tests put a clock of
 * their own here.
 */
export interface WorkflowRunHost {
  /** What the actors read the time from. */
  clock: Clock;
  /** Hands the runtime an actor's environment: steps call `workflow.start`, `email.send`, … with it. */
  useEnv(env: { readonly [binding: string]: unknown }): void;
  /** How the run index actor cancels and reruns runs (bulk operations): the runtime's backend over `env`. */
  runControls(env: { readonly [binding: string]: unknown }): RunControls;
  /** The account's live-run slots, as the project worker of `env` asks for them (tests hand it a platform of their own). */
  liveRuns(env: { readonly [binding: string]: unknown }): LiveRunSlots;
}

export const workflowRunHost: WorkflowRunHost = {
  clock: systemClock,
  useEnv: () => {},
  runControls: () => {
    throw new PlatformError(
      "not_ready",
      "The workflow runtime has not loaded: bulk operations cannot act on runs yet.",
    );
  },
  liveRuns: platformLiveRunSlots,
};
