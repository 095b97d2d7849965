import { refuseUnknownKeys } from "../../core/unknownKeys.ts";
import { PlatformError } from "../../core/errors.ts";

/**
 * Flow control per key: a workflow's `concurrency`, `throttle` and `debounce`
 * options, and the pure state machine of one key's queue that every backend runs (the local
 * backends in process, the Durable Object backend in one WorkflowFlowKey actor per key).
 *
 * - concurrency `{ limit }`: at most `limit` runs of a key are active (started and not ended);
 * - throttle `{ limit, periodMS }`: at most `limit` runs of a key start within any `periodMS`;
 * - debounce `{ periodMS }`: a start while the key's debounced run is still queued replaces that
 *   run's data and restarts its wait, so one run starts `periodMS` after the last start.
 *
 * A start that may not start at once is created `queued` and starts (workflow_dequeued) when the
 * limits allow: a higher `priority` (1-10, default 5) first; within a priority, round-robin across
 * the `concurrency.fairness` values of the queued runs (one value's backlog delays another's run by
 * at most one start); within a value, in arrival order.
 */

/** A key function: the key a start is counted under, from its start data. Default: one key for the whole workflow. */
// biome-ignore lint/suspicious/noExplicitAny: public default: start data is user JSON read without declaring a type
export type FlowKeyFunction<Data = any> = (data: Data) => string;

// biome-ignore lint/suspicious/noExplicitAny: public defaults, as FlowKeyFunction's
export interface ConcurrencyOption<Data = any> {
  limit: number;
  key?: FlowKeyFunction<Data>;
  /** Queued runs of a key start round-robin across these values (a tenant, a customer), from the start data. */
  fairness?: FlowKeyFunction<Data>;
}

// biome-ignore lint/suspicious/noExplicitAny: public defaults, as FlowKeyFunction's
export interface ThrottleOption<Data = any> {
  limit: number;
  periodMS: number;
  key?: FlowKeyFunction<Data>;
}

// biome-ignore lint/suspicious/noExplicitAny: public defaults, as FlowKeyFunction's
export interface DebounceOption<Data = any> {
  periodMS: number;
  key?: FlowKeyFunction<Data>;
}

/** The workflow options this file reads. */
export interface FlowControlOptions {
  concurrency?: ConcurrencyOption;
  throttle?: ThrottleOption;
  debounce?: DebounceOption;
}

/** A workflow's validated flow control. */
export interface FlowControl {
  readonly concurrency: { readonly limit: number } | null;
  readonly throttle: { readonly limit: number; readonly periodMS: number } | null;
  readonly debounce: { readonly periodMS: number } | null;
  readonly keys: readonly FlowKeyFunction[];
  /** `concurrency.fairness`, or null: every queued run of a key has the same fairness value. */
  readonly fairness: FlowKeyFunction | null;
}

/**
 * The bounds of the options: a key's state is held by one actor, so its queue, its throttle's
 * window and its slots stay small enough to be read and written whole.
 */
export const FLOW_LIMITS = Object.freeze({
  concurrency: 1000,
  throttle: 1000,
  periodMS: 86_400_000,
  keyLength: 256,
});

/** What each option takes; any other key is refused as a typo. */
const OPTION_KEYS = {
  concurrency: ["limit", "key", "fairness"],
  throttle: ["limit", "periodMS", "key"],
  debounce: ["periodMS", "key"],
} as const;

/** Validates the options; null when the workflow has no flow control. Throws `invalid_input` naming the bad part. */
export function toFlowControl(workflowName: string, options: FlowControlOptions): FlowControl | null {
  const { concurrency, throttle, debounce } = options;
  if (concurrency === undefined && throttle === undefined && debounce === undefined) return null;
  const where = (option: string) => `workflow("${workflowName}") ${option}`;
  const keys: FlowKeyFunction[] = [];
  const keyOf = (option: string, value: { key?: unknown }) => {
    if (value.key === undefined) return;
    if (typeof value.key !== "function")
      throw invalid(`${where(option)}.key must be a function of the start data returning a string`);
    keys.push(value.key as FlowKeyFunction);
  };
  const object = (option: keyof typeof OPTION_KEYS, value: unknown) => {
    if (typeof value !== "object" || value === null || Array.isArray(value))
      throw invalid(`${where(option)} must be an object, e.g. ${EXAMPLES[option]}`);
    refuseUnknownKeys(value, OPTION_KEYS[option], where(option));
    return value as Record<string, unknown>;
  };
  let concurrencyLimit: { limit: number } | null = null;
  let fairness: FlowKeyFunction | null = null;
  if (concurrency !== undefined) {
    const value = object("concurrency", concurrency);
    concurrencyLimit = { limit: count(`${where("concurrency")}.limit`, value.limit, FLOW_LIMITS.concurrency) };
    keyOf("concurrency", value);
    if (value.fairness !== undefined && typeof value.fairness !== "function")
      throw invalid(`${where("concurrency")}.fairness must be a function of the start data returning a string`);
    fairness = (value.fairness as FlowKeyFunction | undefined) ?? null;
  }
  let throttleLimit: { limit: number; periodMS: number } | null = null;
  if (throttle !== undefined) {
    const value = object("throttle", throttle);
    throttleLimit = {
      limit: count(`${where("throttle")}.limit`, value.limit, FLOW_LIMITS.throttle),
      periodMS: period(`${where("throttle")}.periodMS`, value.periodMS),
    };
    keyOf("throttle", value);
  }
  let debouncePeriod: { periodMS: number } | null = null;
  if (debounce !== undefined) {
    const value = object("debounce", debounce);
    debouncePeriod = { periodMS: period(`${where("debounce")}.periodMS`, value.periodMS) };
    keyOf("debounce", value);
  }
  return Object.freeze({
    concurrency: concurrencyLimit,
    throttle: throttleLimit,
    debounce: debouncePeriod,
    keys: Object.freeze(keys),
    fairness,
  });
}

const EXAMPLES: Record<string, string> = {
  concurrency: "{ limit: 2, key: (data) => data.customer }",
  throttle: "{ limit: 25, periodMS: 1000 }",
  debounce: "{ periodMS: 1000, key: (data) => data.customer }",
};

/**
 * The key a start of `workflowName` with `data` is counted under: what its key functions answer
 * (all of them alike), "" when none is given. Throws `invalid_input` for a key that is not a string
 * of at most 256 characters without control characters, a key function that throws, or key functions
 * that disagree.
 */
export function flowKeyOf(workflowName: string, flow: FlowControl, data: unknown): string {
  const found = new Set(flow.keys.map((keyFunction) => keyValue(workflowName, "key", keyFunction, data)));
  if (found.size > 1)
    throw invalid(
      `The concurrency, throttle and debounce keys of workflow "${workflowName}" must agree for a start; got ${[...found].map((k) => JSON.stringify(k)).join(" and ")}`,
    );
  return [...found][0] ?? "";
}

/** How a start queues among its key's runs: its priority and its fairness value (`concurrency.fairness`). */
export interface QueueRank {
  readonly priority: number;
  readonly fairness: string;
}

export const DEFAULT_PRIORITY = 5;
export const DEFAULT_RANK: QueueRank = Object.freeze({ priority: DEFAULT_PRIORITY, fairness: "" });

/** A start's rank: `priority` as given (checked by the start), its fairness value from its data; same checks as a key's. */
export function flowRankOf(
  workflowName: string,
  flow: FlowControl,
  data: unknown,
  priority: number = DEFAULT_PRIORITY,
): QueueRank {
  return { priority, fairness: flow.fairness ? keyValue(workflowName, "fairness", flow.fairness, data) : "" };
}

/** One key function's value for a start: a string of at most 256 characters without control characters. */
function keyValue(workflowName: string, what: "key" | "fairness", keyFunction: FlowKeyFunction, data: unknown): string {
  const named = what === "key" ? "flow control key" : "concurrency fairness value";
  let key: unknown;
  try {
    key = keyFunction(data);
  } catch (error) {
    throw new PlatformError(
      "invalid_input",
      `The ${named} of workflow "${workflowName}" threw for this start's data: ${error instanceof Error ? error.message : String(error)}`,
      undefined,
      { cause: error },
    );
  }
  if (typeof key !== "string" || key.length > FLOW_LIMITS.keyLength || /[\u0000-\u001f\u007f]/.test(key)) {
    throw invalid(
      `The ${named} of workflow "${workflowName}" must be a string of at most ${FLOW_LIMITS.keyLength} characters without control characters, got ${JSON.stringify(key) ?? String(key)}`,
    );
  }
  return key;
}

/** One key's queue and slots. Arrays are short: at most the limits, and the runs queued under the key. */
export interface FlowKeyState {
  /** Runs that started and have not ended: they hold the concurrency slots. */
  readonly active: readonly string[];
  /** Queued runs in arrival order (the debounced run joins them once its quiet period is over). */
  readonly queue: readonly string[];
  /** When runs of the key started within the throttle's period, oldest first. */
  readonly started: readonly number[];
  /** The debounced run: queued, joined by every start of the key until `until` passes without one. */
  readonly debounce: { readonly runId: string; readonly until: number } | null;
  /** The rank of each queued (or debounced) run whose rank is not {@link DEFAULT_RANK}; absent: none has one. */
  readonly ranks?: Readonly<Record<string, QueueRank>>;
  /** The fairness value of the run that left the queue last: where the round-robin goes on from. */
  readonly turn?: string;
}

export const EMPTY_FLOW_KEY: FlowKeyState = Object.freeze({ active: [], queue: [], started: [], debounce: null });

export type FlowInput =
  /** A start of the key (its run id chosen by the backend), with its rank (default {@link DEFAULT_RANK}). */
  | { type: "arrive"; runId: string; now: number; rank?: QueueRank }
  /** A run of the key ended, was cancelled, or turned out not to be created (its id was taken). */
  | { type: "ended"; runId: string; now: number }
  /** Time passed: a debounce's quiet period or a throttle's period may be over. */
  | { type: "tick"; now: number };

/**
 * How an arriving start goes in: `start` (created running, it holds a slot already), `queue`
 * (created queued), `join` (a debounced start: no run is created, `runId`'s data is replaced), or
 * `held` (the key holds that run id already: a scheduled tick delivered twice; its creation answers
 * the existing run and the key changes nothing).
 */
export type FlowArrival = { kind: "start" } | { kind: "queue" } | { kind: "join"; runId: string } | { kind: "held" };

export interface FlowDecision {
  state: FlowKeyState;
  /** For an arrival: how it goes in. */
  arrival?: FlowArrival;
  /** Queued runs to start now (append workflow_dequeued), in order; each holds a slot already. */
  dequeue: string[];
  /** When the key needs a tick (epoch ms), or null when nothing waits for time. */
  wakeAt: number | null;
}

/** The key's next state and what to do, for one input. Pure. */
export function decideFlow(state: FlowKeyState, flow: FlowControl, input: FlowInput): FlowDecision {
  const { now } = input;
  let arrival: FlowArrival | undefined;
  let next: FlowKeyState = state;
  if (input.type === "arrive" && holds(state, input.runId)) {
    return { ...admit(state, flow, now), arrival: { kind: "held" } };
  }
  if (input.type === "arrive") {
    if (flow.debounce && state.debounce) {
      arrival = { kind: "join", runId: state.debounce.runId };
      next = { ...state, debounce: { runId: state.debounce.runId, until: now + flow.debounce.periodMS } };
    } else if (flow.debounce) {
      arrival = { kind: "queue" };
      next = withRank(
        { ...state, debounce: { runId: input.runId, until: now + flow.debounce.periodMS } },
        input.runId,
        input.rank,
      );
    } else {
      // Queued behind the others, then admitted at once if its turn is now.
      next = withRank({ ...state, queue: [...state.queue, input.runId] }, input.runId, input.rank);
    }
  } else if (input.type === "ended") {
    next = withoutRank(
      {
        ...state,
        active: state.active.filter((id) => id !== input.runId),
        queue: state.queue.filter((id) => id !== input.runId),
        debounce: state.debounce?.runId === input.runId ? null : state.debounce,
      },
      input.runId,
    );
  }
  const admitted = admit(next, flow, now);
  if (input.type === "arrive" && !arrival) {
    const startsNow = admitted.dequeue.includes(input.runId);
    arrival = startsNow ? { kind: "start" } : { kind: "queue" };
    if (startsNow) admitted.dequeue = admitted.dequeue.filter((id) => id !== input.runId);
  }
  return { ...admitted, ...(arrival ? { arrival } : {}) };
}

function admit(state: FlowKeyState, flow: FlowControl, now: number): FlowDecision {
  const queue = [...state.queue];
  let debounce = state.debounce;
  if (debounce && debounce.until <= now) {
    queue.push(debounce.runId);
    debounce = null;
  }
  const active = [...state.active];
  const started = flow.throttle ? state.started.filter((at) => at > now - flow.throttle!.periodMS) : [];
  const dequeue: string[] = [];
  const ranks = { ...state.ranks };
  let turn = state.turn;
  while (queue.length > 0 && slotFree(active, flow) && throttleFree(started, flow)) {
    const [runId] = queue.splice(nextInQueue(queue, ranks, turn), 1) as [string];
    turn = rankOf(ranks, runId).fairness;
    delete ranks[runId];
    active.push(runId);
    if (flow.throttle) started.push(now);
    dequeue.push(runId);
  }
  let wakeAt: number | null = debounce ? debounce.until : null;
  if (queue.length > 0 && slotFree(active, flow) && !throttleFree(started, flow)) {
    const throttleEnds = started[0]! + flow.throttle!.periodMS;
    wakeAt = wakeAt === null ? throttleEnds : Math.min(wakeAt, throttleEnds);
  }
  const ranked = Object.keys(ranks).length > 0 ? { ranks } : {};
  return {
    state: { active, queue, started, debounce, ...ranked, ...(flow.fairness && turn !== undefined ? { turn } : {}) },
    dequeue,
    wakeAt,
  };
}

/**
 * Which queued run starts next: the highest priority; within it, the first run of the fairness
 * value after `turn` in the order those values first queued (round-robin), or of the first value
 * when `turn` has none queued; within a value, the earliest. Answers its index in `queue`.
 */
function nextInQueue(
  queue: readonly string[],
  ranks: Readonly<Record<string, QueueRank>>,
  turn: string | undefined,
): number {
  const top = Math.max(...queue.map((runId) => rankOf(ranks, runId).priority));
  const firstOf = new Map<string, number>();
  queue.forEach((runId, index) => {
    const rank = rankOf(ranks, runId);
    if (rank.priority === top && !firstOf.has(rank.fairness)) firstOf.set(rank.fairness, index);
  });
  const values = [...firstOf.keys()];
  const after = turn === undefined ? -1 : values.indexOf(turn);
  const value = values[after >= 0 ? (after + 1) % values.length : 0]!;
  return firstOf.get(value)!;
}

function rankOf(ranks: Readonly<Record<string, QueueRank>> | undefined, runId: string): QueueRank {
  return ranks?.[runId] ?? DEFAULT_RANK;
}

function withRank(state: FlowKeyState, runId: string, rank: QueueRank | undefined): FlowKeyState {
  if (rank === undefined || (rank.priority === DEFAULT_RANK.priority && rank.fairness === DEFAULT_RANK.fairness))
    return state;
  return { ...state, ranks: { ...state.ranks, [runId]: rank } };
}

function withoutRank(state: FlowKeyState, runId: string): FlowKeyState {
  if (!state.ranks || !(runId in state.ranks)) return state;
  const { [runId]: _, ...ranks } = state.ranks;
  const { ranks: __, ...rest } = state;
  return Object.keys(ranks).length > 0 ? { ...rest, ranks } : rest;
}

function holds(state: FlowKeyState, runId: string): boolean {
  return state.active.includes(runId) || state.queue.includes(runId) || state.debounce?.runId === runId;
}

function slotFree(active: readonly string[], flow: FlowControl): boolean {
  return !flow.concurrency || active.length < flow.concurrency.limit;
}

function throttleFree(started: readonly number[], flow: FlowControl): boolean {
  return !flow.throttle || started.length < flow.throttle.limit;
}

/** A queued run asked about: its flow key, its id and the time of asking. */
export interface QueuedRunQuestion {
  key: string;
  runId: string;
  now: number;
}

/** What a queued run of the key waits for, in words, with how many are ahead and (when time decides) its earliest start. */
export function explainQueued(
  state: FlowKeyState,
  flow: FlowControl,
  { key, runId, now }: QueuedRunQuestion,
): { waitsFor: string; ahead?: number; notBefore?: number } | null {
  const named = JSON.stringify(key);
  if (state.debounce?.runId === runId && flow.debounce) {
    return {
      waitsFor: `a quiet period: it starts ${flow.debounce.periodMS} ms after the last start of key ${named}, with that start's data`,
      notBefore: state.debounce.until,
    };
  }
  const ahead = startsBefore(state, runId);
  if (ahead < 0) return null;
  if (!slotFree(state.active, flow))
    return {
      waitsFor: `a concurrency slot: ${state.active.length} of ${flow.concurrency!.limit} runs of key ${named} are active`,
      ahead,
    };
  const started = flow.throttle ? state.started.filter((at) => at > now - flow.throttle!.periodMS) : [];
  if (!throttleFree(started, flow))
    return {
      waitsFor: `the throttle: ${flow.throttle!.limit} runs of key ${named} started within ${flow.throttle!.periodMS} ms`,
      ahead,
      notBefore: started[0]! + flow.throttle!.periodMS,
    };
  return { waitsFor: `its turn: ${ahead} run(s) of key ${named} are queued before it`, ahead };
}

function count(what: string, value: unknown, max: number): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max)
    throw invalid(`${what} must be an integer from 1 to ${max}, got ${String(value)}`);
  return value as number;
}

function period(what: string, value: unknown): number {
  if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > FLOW_LIMITS.periodMS)
    throw invalid(
      `${what} must be a whole number of milliseconds from 1 to ${FLOW_LIMITS.periodMS} (24 hours), got ${String(value)}`,
    );
  return value as number;
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}

/** How many queued runs start before `runId` if nothing else arrives (-1: it is not queued). */
function startsBefore(state: FlowKeyState, runId: string): number {
  if (!state.queue.includes(runId)) return -1;
  const queue = [...state.queue];
  let turn = state.turn;
  for (let ahead = 0; ; ahead++) {
    const [next] = queue.splice(nextInQueue(queue, state.ranks ?? {}, turn), 1) as [string];
    if (next === runId) return ahead;
    turn = rankOf(state.ranks, next).fairness;
  }
}
