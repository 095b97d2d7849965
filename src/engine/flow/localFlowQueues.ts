import type { CreatedRun } from "../execution/createRun.ts";
import type { WorkflowDefinition } from "../api/definition.ts";
import type { WorkflowRunView } from "../execution/describeRun.ts";
import type { StoredEvent } from "../execution/events.ts";
import {
  DEFAULT_RANK,
  decideFlow,
  EMPTY_FLOW_KEY,
  explainQueued,
  type FlowInput,
  type FlowKeyState,
  flowKeyOf,
  flowRankOf,
  type QueueRank,
} from "./flowControl.ts";
import { dequeueRun, replaceQueuedData } from "./queuedRuns.ts";
import type { RunIndex, WorkflowEventStore } from "../storage/store.ts";

/**
 * The queues of flow control (flowControl.ts) for a backend whose runs all live in one process's
 * store (memory, node:sqlite): each key's state in memory, decided by the same pure `decideFlow`
 * as the Durable Object backend's per-key actors, and rebuilt from the store at start-up (queued
 * runs keep their arrival order, started runs their slots).
 */
export interface LocalFlowQueues {
  /** Starts a run of a workflow with flow control: created running, created queued, or (debounce) joined to the queued one. */
  start(
    definition: WorkflowDefinition,
    data: unknown,
    newRunId: () => string,
    /** `at`: the time the queue counted the start at, for its workflow_created (throttles count the log's times). */
    create: (runId: string, placement: { flowKey: string; queued: boolean; at: number; rank: QueueRank }) => CreatedRun,
    /** `workflow.start`'s priority (default 5). */
    priority?: number,
  ): CreatedRun;
  /** A run ended (or was cancelled): its slot or its place in the queue is free. Idempotent. */
  ended(runId: string): void;
  /** A queued run's view with what its queue says it waits for. */
  explain(view: WorkflowRunView): WorkflowRunView;
  /** Rebuilds every key's state from the store (start-up). */
  rebuild(): void;
  close(): void;
}

export interface LocalFlowQueuesOptions {
  store: WorkflowEventStore & RunIndex;
  definitions: (name: string) => WorkflowDefinition | undefined;
  now: () => number;
  /** A run that now holds a slot: execute it. */
  started: (runId: string) => void;
}

interface Key {
  definition: WorkflowDefinition;
  key: string;
  state: FlowKeyState;
  timer?: ReturnType<typeof setTimeout>;
}

export function createLocalFlowQueues(options: LocalFlowQueuesOptions): LocalFlowQueues {
  const { store, now } = options;
  const keys = new Map<string, Key>();
  const keyOfRun = new Map<string, string>();
  let closed = false;

  const keyFor = (definition: WorkflowDefinition, key: string): [string, Key] => {
    const id = `${definition.name}\u0000${key}`;
    let entry = keys.get(id);
    if (!entry) {
      entry = { definition, key, state: EMPTY_FLOW_KEY };
      keys.set(id, entry);
    }
    return [id, entry];
  };

  /** Feeds the key an input; starts what it dequeues and sets its timer. Answers the decision's arrival. */
  function apply(id: string, entry: Key, input: FlowInput) {
    const decision = decideFlow(entry.state, entry.definition.flow!, input);
    entry.state = decision.state;
    if (input.type === "arrive") keyOfRun.set(input.runId, id);
    for (const runId of decision.dequeue) {
      // A run cancelled while queued frees its place through ended(); one that is not queued any more is left alone.
      if (dequeueRun(store, runId, input.now)) options.started(runId);
      else apply(id, entry, { type: "ended", runId, now: input.now });
    }
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    entry.timer = undefined;
    if (decision.wakeAt !== null && !closed) {
      entry.timer = setTimeout(
        () => apply(id, entry, { type: "tick", now: now() }),
        Math.max(0, decision.wakeAt - now()),
      );
    }
    return decision.arrival;
  }

  return {
    start(definition, data, newRunId, create, priority) {
      const [id, entry] = keyFor(definition, flowKeyOf(definition.name, definition.flow!, data));
      const rank = flowRankOf(definition.name, definition.flow!, data, priority);
      for (;;) {
        const runId = newRunId();
        const at = now();
        const arrival = apply(id, entry, { type: "arrive", runId, now: at, rank });
        if (arrival?.kind === "join") {
          keyOfRun.delete(runId);
          if (replaceQueuedData(store, arrival.runId, data, at)) {
            const joined = store.getRun(arrival.runId)!;
            return { runId: joined.id, workflowId: joined.workflowId, created: false };
          }
          // The debounced run started or ended meanwhile: forget it and arrive again.
          apply(id, entry, { type: "ended", runId: arrival.runId, now: now() });
          continue;
        }
        if (arrival?.kind === "held") return create(runId, { flowKey: entry.key, queued: true, at, rank });
        let created: CreatedRun;
        try {
          created = create(runId, { flowKey: entry.key, queued: arrival?.kind !== "start", at, rank });
        } catch (error) {
          this.ended(runId);
          throw error;
        }
        if (!created.created) this.ended(runId);
        else if (arrival?.kind === "start") options.started(runId);
        return created;
      }
    },

    ended(runId) {
      const id = keyOfRun.get(runId);
      const entry = id === undefined ? undefined : keys.get(id);
      keyOfRun.delete(runId);
      if (id !== undefined && entry) apply(id, entry, { type: "ended", runId, now: now() });
    },

    explain(view) {
      if (view.status !== "queued" || !view.queued) return view;
      const entry = keys.get(keyOfRun.get(view.id) ?? "");
      const explained =
        entry && explainQueued(entry.state, entry.definition.flow!, { key: entry.key, runId: view.id, now: now() });
      return explained ? { ...view, queued: { ...view.queued, ...explained } } : view;
    },

    rebuild() {
      /** A run this process has not placed yet, with its log and its key's entry; undefined when it has no flow key. */
      function flowKeyOfRun(runId: string) {
        const events = store.events(runId);
        const created = events[0];
        if (created?.type !== "workflow_created" || created.payload.flow_key === undefined) return undefined;
        const definition = options.definitions(created.payload.workflowName);
        if (!definition?.flow) return undefined;
        const [id, entry] = keyFor(definition, created.payload.flow_key);
        return { events, id, entry };
      }

      // Started runs hold their slots (and, within the throttle's period, their start times) ...
      // Runs this process has seen already (started before the rebuild ran) are in their keys.
      for (const runId of store.activeRunIds()) {
        const found = keyOfRun.has(runId) ? undefined : flowKeyOfRun(runId);
        if (!found) continue;
        const { events, id, entry } = found;
        const startedAt = events.find((event) => event.type === "workflow_dequeued")?.at ?? events[0]!.at;
        entry.state = {
          ...entry.state,
          active: [...entry.state.active, runId],
          started: [...entry.state.started, startedAt].sort((a, b) => a - b),
        };
        keyOfRun.set(runId, id);
      }
      // ... and queued runs wait in their arrival order, before any that arrived since this process began;
      // the newest, if its quiet period is not over, is the debounced one.
      const rebuilt = new Map<Key, { runId: string; lastArrival: number; rank: QueueRank }[]>();
      for (const runId of queuedRunIds(store)) {
        const found = keyOfRun.has(runId) ? undefined : flowKeyOfRun(runId);
        if (!found) continue;
        const { events, id, entry } = found;
        const lastArrival = events.findLast((e) => e.type === "start_replaced" || e.type === "workflow_created")!.at;
        rebuilt.set(entry, [...(rebuilt.get(entry) ?? []), { runId, lastArrival, rank: rankOfCreated(events[0]!) }]);
        keyOfRun.set(runId, id);
      }
      for (const [entry, queued] of rebuilt) {
        const debounce = entry.definition.flow!.debounce;
        const newest = queued[queued.length - 1]!;
        const until = debounce ? newest.lastArrival + debounce.periodMS : 0;
        const debounced = debounce && !entry.state.debounce && until > now() ? { runId: newest.runId, until } : null;
        const waiting = (debounced ? queued.slice(0, -1) : queued).map((q) => q.runId);
        const ranks = Object.fromEntries(
          queued
            .filter((q) => q.rank.priority !== DEFAULT_RANK.priority || q.rank.fairness !== DEFAULT_RANK.fairness)
            .map((q) => [q.runId, q.rank]),
        );
        entry.state = {
          ...entry.state,
          queue: [...waiting, ...entry.state.queue],
          debounce: debounced ?? entry.state.debounce,
          ...(Object.keys(ranks).length > 0 ? { ranks: { ...entry.state.ranks, ...ranks } } : {}),
        };
      }
      for (const [id, entry] of keys) apply(id, entry, { type: "tick", now: now() });
    },

    close() {
      closed = true;
      for (const entry of keys.values()) if (entry.timer !== undefined) clearTimeout(entry.timer);
    },
  };
}

/** A queued run's rank as its workflow_created recorded it. */
function rankOfCreated(created: StoredEvent): QueueRank {
  if (created.type !== "workflow_created") return DEFAULT_RANK;
  return {
    priority: created.payload.flow_priority ?? DEFAULT_RANK.priority,
    fairness: created.payload.flow_fairness ?? DEFAULT_RANK.fairness,
  };
}

/** The store's queued runs, oldest first (the list pages newest first). */
function queuedRunIds(store: RunIndex): string[] {
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const page = store.listRuns({ status: "queued", limit: 100, ...(cursor ? { cursor } : {}) });
    ids.push(...page.runs.map((run) => run.id));
    cursor = page.cursor;
  } while (cursor);
  return ids.reverse();
}
