import type { ActorCall } from "#src/objects/actorClient.ts";
import type { StoredEvent } from "#src/engine/execution/events.ts";
import type { FaultKind, FaultSwitch } from "./storageFaults.ts";

/**
 * Seeded faults on actor RPCs, as the Workers runtime can fail them: a call
 * refused before it reaches the callee (an overloaded or reset actor), or an
 * exception after the callee acted (its effect landed, the caller lost the
 * answer: "Network connection lost"). Put around every actor client call
 * through `actorCalls.around` (src/objects/actorClient.ts); only the methods
 * named are faulted, so a test's own reads stay healthy.
 */
export class InjectedRpcFault extends Error {
  override name = "InjectedRpcFault";
  constructor(method: string, kind: FaultKind) {
    super(
      `RPC ${method} failed ${kind === "before" ? "before the callee acted" : "after the callee acted"} (injected)`,
    );
  }
}

/** Faults injected so far, by method and kind ("record:after"). */
export type InjectedRpcFaults = Map<string, number>;

export function faultyActorCalls(
  faults: FaultSwitch,
  methods: ReadonlySet<string>,
  injected: InjectedRpcFaults,
): (call: ActorCall, invoke: () => Promise<unknown>) => Promise<unknown> {
  return async ({ method }, invoke) => {
    const fault = methods.has(method) ? faults.next() : null;
    if (fault) injected.set(`${method}:${fault}`, (injected.get(`${method}:${fault}`) ?? 0) + 1);
    if (fault === "before") throw new InjectedRpcFault(method, fault);
    const answer = await invoke();
    if (fault === "after") throw new InjectedRpcFault(method, fault);
    return answer;
  };
}

/** Fails the `nth` call of `method` (counting from 1) as `kind`; every other call goes through. */
export function failNthCall(method: string, nth: number, kind: FaultKind) {
  let seen = 0;
  return async (call: ActorCall, invoke: () => Promise<unknown>): Promise<unknown> => {
    if (call.method !== method || ++seen !== nth) return invoke();
    if (kind === "before") throw new InjectedRpcFault(method, kind);
    await invoke();
    throw new InjectedRpcFault(method, kind);
  };
}

const TERMINAL = new Set(["workflow_completed", "workflow_failed", "workflow_cancelled"]);

/** Why a run's log breaks a promise (empty: it keeps them): seq without gap, one terminal event last, each step committed once. */
export function logProblems(events: readonly StoredEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((event, i) => {
    if (event.seq !== i + 1) problems.push(`seq ${event.seq} at position ${i + 1}`);
  });
  const terminals = events.filter((e) => TERMINAL.has(e.type));
  if (terminals.length !== 1) problems.push(`${terminals.length} terminal events`);
  if (terminals[0] && terminals[0] !== events.at(-1)) problems.push("events after the terminal one");
  const completions = new Map<string, number>();
  for (const e of events)
    if (e.type === "step_completed") completions.set(e.payload.step, (completions.get(e.payload.step) ?? 0) + 1);
  for (const [step, count] of completions) if (count > 1) problems.push(`step ${step} committed ${count} times`);
  return problems;
}
