/**
 * A run id carries the id of the WorkflowRun actor that holds it (`<actor id>.<random>`), so a
 * run is found from its id alone: by `workflow.get`, and by a flow key's queue that starts it.
 */
const RUN_ID = /^([0-9a-f]{64})\.([a-z0-9]{12})$/;

/** The actor id a run id names in `namespace`; null for an id no actor of it could hold (made up, or foreign). */
export function runActorIdOf(namespace: DurableObjectNamespace, runId: string): DurableObjectId | null {
  const match = RUN_ID.exec(runId);
  if (!match) return null;
  try {
    return namespace.idFromString(match[1]!);
  } catch {
    // 64 hex digits that are not an id of this namespace: no such run.
    return null;
  }
}
