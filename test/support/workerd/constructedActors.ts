/**
 * Which of the harness's actors may hold storage that the next test must not see.
 *
 * workerd's reset (deleteAllDurableObjects) wipes only the actors running at that moment, and a
 * wiped actor keeps its (empty) file, so every id a file ever made stays listed. Waking every listed
 * id before each test costs time in proportion to every actor the file has made so far (seconds per
 * test late in the workflow conformance file). Instead, after each reset every actor is evicted, so
 * an actor that writes afterwards must be constructed first: the harness's classes record their
 * construction here, and only those (and ids never listed before, should a class not record) are
 * woken for the next reset.
 */
const constructedSinceReset = new Set<string>();
const listedBefore = new Set<string>();

/** Called by each harness actor's constructor. */
export function recordActorConstructed(id: DurableObjectId): void {
  constructedSinceReset.add(id.toString());
}

/** Of a namespace's listed ids, those that may hold storage since the last reset; all are listed from now on. */
export function actorsToWake(listed: readonly DurableObjectId[]): DurableObjectId[] {
  const toWake = listed.filter((id) => constructedSinceReset.has(id.toString()) || !listedBefore.has(id.toString()));
  for (const id of listed) listedBefore.add(id.toString());
  return toWake;
}

/** After a reset and an eviction of every actor: nothing holds storage. */
export function forgetConstructedActors(): void {
  constructedSinceReset.clear();
}

type ActorClass = new (...args: any[]) => object;

/** The actor class, recording each construction (its first argument is the actor's state). */
export function recordingConstruction<C extends ActorClass>(actorClass: C): C {
  return class extends actorClass {
    constructor(...args: any[]) {
      super(...args);
      recordActorConstructed((args[0] as DurableObjectState).id);
    }
  };
}
