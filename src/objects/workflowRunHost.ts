import type { Clock } from "../engine/clock.ts";
import { systemClock } from "../engine/clock.ts";

/**
 * What a WorkflowRun actor needs from the project worker that hosts it. The
 * runtime's workflow capability fills it in when it loads (before any actor
 * is made), so the actors depend on no runtime module; tests put a clock of
 * their own here.
 */
export interface WorkflowRunHost {
  /** What the actors read the time from. */
  clock: Clock;
  /** Hands the runtime an actor's environment: steps call `workflow.start`, `email.send`, … with it. */
  useEnv(env: { readonly [binding: string]: unknown }): void;
}

export const workflowRunHost: WorkflowRunHost = { clock: systemClock, useEnv: () => {} };
