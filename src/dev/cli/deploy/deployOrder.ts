import type { Unstable_RawConfig } from "wrangler";

/**
 * Why a worker needs another to exist before it can be uploaded: Cloudflare
 * refuses a service binding to a script it cannot find, and a Durable Object
 * binding with `script_name` to a class that script does not export.
 */
export interface WorkerDependency {
  target: string;
  kind: "service" | "durable-object";
  /** The binding's name in the dependent worker, e.g. `CHATSERVER_PLUGIN`. */
  binding: string;
}

export interface WorkerNode {
  name: string;
  needs: WorkerDependency[];
}

/** One `wrangler deploy` of one worker; `omitServices` lists the bindings left out of a first pass. */
export interface DeployPass {
  worker: string;
  omitServices: string[];
}

export class DeployOrderError extends Error {
  readonly code = "deploy_order_cycle";
}

/** The workers a config binds to by name: its service bindings and its Durable Objects of other scripts. */
export function workerDependencies(raw: Unstable_RawConfig): WorkerDependency[] {
  const services = (raw.services ?? []).map((s) => ({
    target: s.service,
    kind: "service" as const,
    binding: s.binding,
  }));
  const actors = (raw.durable_objects?.bindings ?? [])
    .filter((b) => b.script_name && b.script_name !== raw.name)
    .map((b) => ({ target: b.script_name!, kind: "durable-object" as const, binding: b.name }));
  return [...services, ...actors];
}

/**
 * The order to upload the workers in, given in preference order: a worker
 * goes once everything it binds to exists. A cycle made of service bindings
 * (the API worker hands deployed projects to the plugins, the plugins use the
 * API worker's actors) is broken by a first pass of the earliest worker
 * others wait for, without the service bindings to workers not yet up; its
 * full pass follows once they are. A cycle of Durable Object bindings alone
 * cannot be broken and is refused. Bindings to workers outside the list are
 * not ordered (they must already exist).
 */
export function deployOrder(workers: WorkerNode[]): DeployPass[] {
  const known = new Set(workers.map((w) => w.name));
  const exists = new Set<string>();
  const remaining = workers.map((w) => ({
    ...w,
    needs: w.needs.filter((d) => known.has(d.target) && d.target !== w.name),
  }));
  const passes: DeployPass[] = [];
  const missing = (w: WorkerNode) => w.needs.filter((d) => !exists.has(d.target));
  const awaitedByOthers = (w: WorkerNode) =>
    remaining.some((other) => other !== w && other.needs.some((d) => d.target === w.name));
  const canGoFirstWithout = (w: WorkerNode) => !exists.has(w.name) && missing(w).every((d) => d.kind === "service");

  while (remaining.length > 0) {
    const next =
      remaining.find((w) => missing(w).length === 0 || (canGoFirstWithout(w) && awaitedByOthers(w))) ??
      remaining.find(canGoFirstWithout);
    if (!next) {
      const stuck = remaining
        .map(
          (w) =>
            `${w.name} → ${missing(w)
              .map((d) => d.target)
              .join(", ")}`,
        )
        .join("; ");
      throw new DeployOrderError(`The workers' bindings form a cycle no first pass can break: ${stuck}.`);
    }
    const absent = missing(next);
    exists.add(next.name);
    if (absent.length === 0) {
      passes.push({ worker: next.name, omitServices: [] });
      remaining.splice(remaining.indexOf(next), 1);
    } else {
      passes.push({ worker: next.name, omitServices: absent.map((d) => d.binding) });
    }
  }
  return passes;
}
