/**
 * A run id names the WorkflowRun actor that holds the run:
 * `<actor id>.<12 characters>`, so `workflow.get(runId)` (and a child telling
 * its parent) finds the run from its id alone. The 12 characters are random
 * for a run started with `workflow.start`, and derived from the child's key
 * for a child run (so starting it again names the same run: exactly once).
 */
import { randomHex } from "../core/crypto/encoding.ts";

const RUN_ID = /^([0-9a-f]{64})\.([a-z0-9]{12})$/;

function base36(bytes: Uint8Array): string {
  return [...bytes.slice(0, 12)].map((b) => (b % 36).toString(36)).join("");
}

export function randomRunSuffix(): string {
  return base36(crypto.getRandomValues(new Uint8Array(12)));
}

/** The run id of a child run whose actor is `actorId`, from its key (see engine/control/children.ts). */
export function childRunId(actorId: DurableObjectId, key: string): Promise<string> {
  return childRunIdOn(actorId.toString(), key);
}

/** {@link childRunId} for the actor whose id is `actorHex` (64 hex digits). */
export async function childRunIdOn(actorHex: string, key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)));
  return `${actorHex}.${base36(digest)}`;
}

/**
 * A run id of the real shape for a run no actor holds (the test kit's runs): a random
 * 64-hex actor part, so code that parses or stores run ids sees what it sees deployed.
 */
export function unplacedRunId(): string {
  return `${randomHex(32)}.${randomRunSuffix()}`;
}

/** The id of the actor holding `runId`; null for an id no actor of `namespace` holds (made up, or foreign). */
export function actorIdOfRun(namespace: DurableObjectNamespace, runId: string): DurableObjectId | null {
  const match = RUN_ID.exec(runId);
  if (!match) return null;
  try {
    return namespace.idFromString(match[1]!);
  } catch {
    // 64 hex digits that are not an id of this namespace: no such run.
    return null;
  }
}
