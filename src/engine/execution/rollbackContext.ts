import type { ErrorJSON } from "../../core/errors.ts";
import { START_DATA_KEY, type WorkflowFailureCause, type Writes } from "./events.ts";
import { freezeJson, type JsonValue } from "../api/json.ts";
import type { Scratchpad, StepEnv } from "./stepContext.ts";

/**
 * Why the run is being rolled back: the step that failed it, as its step_failed recorded it, or
 * (`cause: "cancelled"`, with `rollbackOnCancel`) the cancel's reason.
 * @example
 * const refund = async (ctx: RollbackContext) => { const failure: RollbackFailure = ctx.failure; console.log(failure.step, failure.reason, failure.cause); };
 */
export interface RollbackFailure {
  /** The step whose failure ended the run; absent for a cancel. */
  readonly step?: string;
  /** What `run.result()` rejects with once the rollbacks are done. */
  readonly reason: string;
  readonly cause: WorkflowFailureCause | "cancelled";
  /** What the failing attempt threw (name, message, stack), when it threw something. */
  readonly error?: ErrorJSON;
}

/**
 * What a rollback handler receives. It undoes one completion of `step`:
 * `output` holds what that completion wrote (`ctx.write` in that step),
 * `scratchpad` everything the run had committed when it failed.
 * @example
 * const refund = async (ctx: RollbackContext) => { await refundCharge(ctx.output.chargeId, `run ${ctx.runId}: ${ctx.failure.reason}`); };
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults, as StepContext's
export interface RollbackContext<Data = any, Pad extends object = Record<string, any>> {
  readonly data: Data;
  readonly scratchpad: Readonly<Partial<Pad>>;
  /** The writes of the completion being undone (empty when the step wrote nothing). */
  readonly output: Readonly<Partial<Pad>>;
  readonly failure: RollbackFailure;
  /** The step being undone. */
  readonly step: string;
  /** The handler's attempt, from 1. */
  readonly attempt: number;
  readonly runId: string;
  readonly workflowId: string;
  readonly env: StepEnv;
}

/**
 * Undoes one completed step; anything it returns is ignored, a throw is a failed attempt.
 * @example
 * const release: RollbackFunction = async (ctx) => { await releaseStock(ctx.output.reservation); };
 * workflow("order", steps, { rollback: { reserve: release } });
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults, as StepFunction's
export type RollbackFunction<Data = any, Pad extends object = Record<string, any>> = {
  rollback(ctx: RollbackContext<Data, Pad>): unknown;
}["rollback"];

export interface RollbackAttemptInput {
  scratchpad: Scratchpad;
  output: Writes;
  failure: RollbackFailure;
  step: string;
  attempt: number;
  runId: string;
  workflowId: string;
  env: StepEnv;
}

/** A frozen context for one attempt of one rollback handler. */
export function createRollbackContext(input: RollbackAttemptInput): RollbackContext {
  return Object.freeze({
    data: input.scratchpad.view[START_DATA_KEY] ?? null,
    scratchpad: input.scratchpad.view,
    output: freezeJson(input.output as JsonValue) as Readonly<Record<string, JsonValue>>,
    failure: Object.freeze({ ...input.failure }),
    step: input.step,
    attempt: input.attempt,
    runId: input.runId,
    workflowId: input.workflowId,
    env: input.env,
  });
}
