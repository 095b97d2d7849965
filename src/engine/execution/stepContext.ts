import { PlatformError } from "../../core/errors.ts";
import { START_DATA_KEY, type StoredEvent, type Writes } from "./events.ts";
import { freezeJson, toJsonValue, type JsonValue } from "../api/json.ts";
import type { AwaitedRun, ChildOutcome, ContinuationRequest } from "./continuation.ts";
import type { DeliveredEvent } from "../control/receivedEvents.ts";
import { checkTopic, encodeStreamData } from "../streams/runStream.ts";
import { checkCallbackLinkRequest } from "../control/callbackLink.ts";

/**
 * What a step function receives. `Data` is the start data, `Pad` the shape of
 * the scratchpad; both default to loosely typed bags because they are plain
 * JSON decided by user code. `workflow<Data, Pad, Result>(…)` types them.
 * @example
 * const charge = async (ctx: StepContext<{ amount: number }>) => {
 *   ctx.write("charged", ctx.data.amount);
 *   return { step: "ship" };
 * };
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults: start data and scratchpad are user JSON read without declaring a type
export interface StepContext<Data = any, Pad extends object = Record<string, any>> {
  /** The start data passed to `workflow.start` (null when none was given). */
  readonly data: Data;
  /** Values committed by completed steps (and `data`); read-only, this step's own writes are not visible until it completes. */
  readonly scratchpad: Readonly<Partial<Pad>>;
  /** Buffers a scratchpad value; committed with this step's step_completed, dropped if the step fails. Value must be JSON (see json.ts). */
  write<Key extends keyof Pad & string>(key: Key, value: Pad[Key]): void;
  readonly step: string;
  /** From 1. */
  readonly attempt: number;
  readonly runId: string;
  readonly workflowId: string;
  /**
   * In the step that follows a wait (`{ step, waitFor }`),
   * the event sent with `workflow.send`, or null when the wait timed out;
   * null in every other step.
   */
  readonly event: DeliveredEvent | null;
  /**
   * In the step that follows `{ step, waitForRun: runId }`, how that run ended
   * (`{ runId, status, result?, error? }`), or null when the wait timed out; null in every other step.
   */
  readonly awaited: AwaitedRun | null;
  /**
   * In the step that follows `{ step, children }`, how each
   * child run ended (`{ runId, workflow, status, result?, error? }`), in the
   * order they were asked for; null in every other step.
   */
  readonly children: readonly ChildOutcome[] | null;
  /**
   * The project's variables and secrets, as `env` in its
   * `fetch` has them (`platform secret put`, `.dev.vars` under `platform
   * dev`): `ctx.env.API_KEY`. Only string values; read when the attempt starts.
   */
  readonly env: StepEnv;
  /**
   * Appends a message to the run's live stream (runStream.ts): at once, not
   * when the step ends, and kept even if this attempt later fails (streams are
   * at-least-once). Topic 1-64 characters of `[a-z0-9_.-]`; data JSON of at most 64 KiB.
   */
  publish(topic: string, data: unknown): void;
  /**
   * A URL on the project's origin that sends `event` to this run: a POST with
   * a JSON or form body appends `event_received { name: event, payload: body,
   * via: "callback" }`, once (a second POST answers 409 `conflict`, one after
   * `ttlMS` 410 `gone`); a GET only shows a page whose button POSTs, so a
   * mail scanner that opens links delivers nothing. `ttlMS` defaults to 7
   * days, at most 30. Pair it with a `waitFor: event`.
   * @example
   * const ask = async (ctx: StepContext) => {
   *   const approve = await ctx.callbackURL("approval", { ttlMS: 2 * 86_400_000 });
   *   console.log(`Approve: ${approve}`);
   *   return { step: "decide", waitFor: "approval" };
   * };
   */
  callbackURL(event: string, options?: { ttlMS?: number }): Promise<string>;
}

/** What `ctx.env` holds: the string bindings of the worker (or process) that runs the step. */
export type StepEnv = { readonly [name: string]: string | undefined };

const NO_ENV: StepEnv = Object.freeze({});
let stepEnvSource: () => StepEnv = () => NO_ENV;

/**
 * The host says where `ctx.env` comes from: the runtime hands over the
 * environment it was given (a worker's bindings; the test kit's or `platform
 * dev --node`'s variables). Each attempt reads it when it starts.
 */
export function setStepEnvSource(source: () => StepEnv): void {
  stepEnvSource = source;
}

/** `ctx.env` for an attempt starting now (a step's or a rollback handler's). */
export function currentStepEnv(): StepEnv {
  return stepEnvSource();
}

/**
 * What a step returns: the name of the next step, or the end of the workflow
 * with its result (JSON; omitted means null). A step that names the next one
 * may also delay it (see {@link ContinuationRequest}).
 * @example
 * const next: StepResult = { step: "remind", sleepMS: 86_400_000 };
 * const done: StepResult = { done: true, result: { ok: true } };
 */
// biome-ignore lint/suspicious/noExplicitAny: public default: a result is user JSON returned without declaring a type
export type StepResult<Result = any> = ({ step: string } & ContinuationRequest) | { done: true; result?: Result };

/**
 * One step of a workflow. Declared as a method so a typed step (`StepFunction<Order>`)
 * still counts as a step of the untyped definitions the engine executes.
 */
// biome-ignore lint/suspicious/noExplicitAny: public defaults, as StepContext's and StepResult's
export type StepFunction<Data = any, Pad extends object = Record<string, any>, Result = any> = {
  step(ctx: StepContext<Data, Pad>): StepResult<Result> | Promise<StepResult<Result>>;
}["step"];

/**
 * The scratchpad of one run, kept in memory for one execution: built once
 * from the log, then advanced event by event, so each step costs O(1)
 * instead of a replay of the whole log.
 */
export interface Scratchpad {
  /** A read-only live view; values are deep-frozen. */
  readonly view: Readonly<Record<string, JsonValue>>;
  /** Folds the writes of a workflow_created, start_replaced or step_completed event in; other events are ignored. */
  apply(event: StoredEvent): void;
}

export function createScratchpad(events: Iterable<StoredEvent> = []): Scratchpad {
  // A null-prototype target, so keys such as "__proto__" or "constructor" are plain data.
  const values: Record<string, JsonValue> = Object.create(null) as Record<string, JsonValue>;
  const view = new Proxy(values, {
    set: readOnly,
    defineProperty: readOnly,
    deleteProperty: readOnly,
    setPrototypeOf: readOnly,
  }) as Readonly<Record<string, JsonValue>>;
  const pad: Scratchpad = {
    view,
    apply(event) {
      if (event.type !== "workflow_created" && event.type !== "step_completed" && event.type !== "start_replaced")
        return;
      const writes: Writes = event.payload.writes;
      for (const key of Object.keys(writes)) values[key] = freezeJson(writes[key] as JsonValue);
    },
  };
  for (const event of events) pad.apply(event);
  return pad;
}

function readOnly(): never {
  throw new TypeError("ctx.scratchpad is read-only; use ctx.write(key, value) to record a value for later steps");
}

export interface StepAttempt {
  readonly ctx: StepContext;
  /** The writes buffered so far, in call order (a later write of a key wins). */
  writes(): Writes;
  /** Ends the attempt: later `ctx.write` calls (from a timed-out step that keeps running) throw instead of buffering. */
  seal(): void;
  /** True when `error` is the one `ctx.write` threw for an invalid key or value (a bug in the step, not worth retrying). */
  isWriteError(error: unknown): boolean;
}

export interface StepAttemptInput {
  scratchpad: Scratchpad;
  step: string;
  attempt: number;
  runId: string;
  workflowId: string;
  /** `ctx.event`; default null. */
  event?: DeliveredEvent | null;
  /** `ctx.children`; default null. */
  children?: readonly ChildOutcome[] | null;
  /** `ctx.awaited`; default null. */
  awaited?: AwaitedRun | null;
  /** Where `ctx.publish` appends (topic and data checked); without it `ctx.publish` refuses. */
  publish?: (topic: string, json: string) => void;
  /** Signs `ctx.callbackURL`'s grant for this run, `ttlMS` from now; without it `ctx.callbackURL` refuses. */
  callbackURL?: (event: string, ttlMS: number) => Promise<string>;
}

/** A fresh context for one attempt of one step, with its own write buffer. */
export function createStepAttempt(input: StepAttemptInput): StepAttempt {
  const buffer = new Map<string, JsonValue>();
  const writeErrors = new WeakSet<object>();
  let sealed = false;
  const ctx: StepContext = {
    data: input.scratchpad.view[START_DATA_KEY] ?? null,
    scratchpad: input.scratchpad.view,
    step: input.step,
    attempt: input.attempt,
    runId: input.runId,
    workflowId: input.workflowId,
    event: input.event ?? null,
    env: currentStepEnv(),
    children: input.children ?? null,
    awaited: input.awaited ?? null,
    publish(topic: string, data: unknown) {
      const what = `ctx.publish in step "${input.step}"`;
      if (sealed)
        throw new PlatformError(
          "invalid_input",
          `${what} came after attempt ${input.attempt} ended (it timed out or already returned); the message was dropped`,
        );
      checkTopic(topic, what);
      const json = encodeStreamData(data, `${what}: the data`);
      if (!input.publish) throw new PlatformError("invalid_input", `${what}: this host keeps no run streams`);
      input.publish(topic, json);
    },
    async callbackURL(event: string, options?: { ttlMS?: number }) {
      const what = `ctx.callbackURL in step "${input.step}"`;
      const request = checkCallbackLinkRequest(event, options, what);
      if (!input.callbackURL) throw new PlatformError("not_ready", `${what}: this host issues no callback URLs`);
      return input.callbackURL(request.event, request.ttlMS);
    },
    write(key: string, value: unknown) {
      if (sealed) {
        throw new PlatformError(
          "invalid_input",
          `ctx.write("${key}") came after attempt ${input.attempt} of step "${input.step}" ended (it timed out or already returned); the value was dropped`,
        );
      }
      try {
        if (typeof key !== "string" || key.length === 0)
          throw new PlatformError("invalid_input", "ctx.write needs a non-empty string key");
        if (key === START_DATA_KEY) {
          throw new PlatformError(
            "invalid_input",
            `ctx.write("${START_DATA_KEY}") is not allowed: "${START_DATA_KEY}" holds the start data; pick another key`,
          );
        }
        buffer.set(key, toJsonValue(value, `ctx.write("${key}") in step "${input.step}"`));
      } catch (error) {
        if (error instanceof Error) writeErrors.add(error);
        throw error;
      }
    },
  };
  return {
    ctx: Object.freeze(ctx),
    writes: () => Object.fromEntries(buffer),
    seal: () => {
      sealed = true;
    },
    isWriteError: (error) => typeof error === "object" && error !== null && writeErrors.has(error),
  };
}
