/**
 * Reading WorkflowRun actors from a test: a run's log and alarm straight from its actor (without
 * calling it), and the per-project index, polled for what the actors do on their own.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { expect, vi } from "vitest";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import { createSqlEventStore } from "#src/engine/storage/sqlEventStore.ts";
import { durableObjectSql } from "#src/objects/durableObjectSql.ts";
import { runIndexOf } from "#src/objects/runIndexClient.ts";
import type { RunStatus } from "#src/engine/storage/store.ts";
import type { WorkflowActorEnv } from "#src/runtime/workflow/workflowActorClient.ts";
import { shape } from "#test/support/workflow/eventLog.ts";
import { PROGRESS } from "#test/support/workflow/progress.ts";

export const actorEnv = env as unknown as WorkflowActorEnv;

/** The id of the actor a run id names (the part before the dot is its Durable Object id). */
export function actorIdOf(runId: string): DurableObjectId {
  return env.WORKFLOW_RUNS.idFromString(runId.split(".")[0]!);
}

/** The actor a run id names. */
export function actorOfRun(runId: string): DurableObjectStub {
  return env.WORKFLOW_RUNS.get(actorIdOf(runId));
}

/** The actor of a workflow id, as workflow.start names it. */
export function actorNamed(workflowId: string): DurableObjectStub {
  return env.WORKFLOW_RUNS.get(env.WORKFLOW_RUNS.idFromName(workflowId));
}

/** The time of the alarm a run's actor has armed, or null. */
export function actorAlarm(runId: string): Promise<number | null> {
  return runInDurableObject(actorOfRun(runId), (_instance, state) => state.storage.getAlarm());
}

/** Reads a run's log straight from its actor's SQLite, without calling the actor. */
export function actorLog(runId: string): Promise<StoredEvent[]> {
  return runInDurableObject(actorOfRun(runId), (_instance, state) =>
    // Opened as the actor opens it (no secondary index), so reading leaves its schema as it was.
    createSqlEventStore(durableObjectSql(state.storage), { manyRuns: false }).events(runId),
  );
}

/** Polls a run's log (from its actor's SQLite) until `check` holds. */
export async function waitForLog(
  runId: string,
  check: (events: StoredEvent[]) => boolean,
  timeout = 5000,
): Promise<StoredEvent[]> {
  let events: StoredEvent[] = [];
  await vi.waitFor(
    async () => {
      events = await actorLog(runId);
      if (!check(events)) throw new Error(`log not there yet: ${shape(events, { reasons: true }).join(", ")}`);
    },
    { timeout, interval: 20 },
  );
  return events;
}

export const isTerminal = (events: StoredEvent[]) =>
  ["workflow_completed", "workflow_failed"].includes(events.at(-1)?.type ?? "");

/** The type of a run's last event, read from its actor's SQLite. */
export async function lastEventType(runId: string): Promise<string | undefined> {
  return (await actorLog(runId)).at(-1)?.type;
}

/** Waits (PROGRESS) until a run's last event is of this type. */
export async function waitForLastEvent(runId: string, type: StoredEvent["type"]): Promise<void> {
  await vi.waitFor(async () => expect(await lastEventType(runId)).toBe(type), PROGRESS);
}

/** Waits (PROGRESS) until the per-project run index lists the run with this status. */
export async function waitForIndexed(
  runId: string,
  status: RunStatus,
  indexEnv: WorkflowActorEnv = actorEnv,
): Promise<void> {
  await vi.waitFor(async () => expect((await runIndexOf(indexEnv).get(runId))?.status).toBe(status), PROGRESS);
}
