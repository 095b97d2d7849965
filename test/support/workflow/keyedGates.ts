import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";

/**
 * Gates keyed by workflow id, which steps wait on until the test opens them. The test creates a
 * gate before starting the run: in workerd, a promise made inside an actor and resolved from the
 * test would resume the step in the test's I/O context, where the actor's storage is out of reach
 * ("Cannot perform I/O on behalf of a different Durable Object").
 */
export function keyedGates() {
  const gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  return {
    /** The gate of a workflow id, created on first use. */
    gateFor(id: string) {
      let entry = gates.get(id);
      if (!entry) {
        let open!: () => void;
        const promise = new Promise<void>((resolve) => {
          open = resolve;
        });
        entry = { promise, open };
        gates.set(id, entry);
      }
      return entry;
    },
    /** What a step awaits: the gate the test must have created before the run started. */
    passGate(id: string): Promise<void> {
      const gate = gates.get(id);
      if (!gate) throw new NonRetryableError(`test bug: no gate for ${id}; create it before the run starts`);
      return gate.promise;
    },
    /** Forgets a gate, so the next run of that id waits on a new one. */
    forget(id: string) {
      gates.delete(id);
    },
    /** Opens every gate and forgets them all (afterEach: no step is left waiting). */
    openAll() {
      for (const gate of gates.values()) gate.open();
      gates.clear();
    },
  };
}
