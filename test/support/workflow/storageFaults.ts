import type { StoredEvent } from "#src/engine/execution/events.ts";
import { seededRandom } from "#test/support/seededRandom.ts";
import type { AppendResult, CreateRunStoreOptions, WorkflowEventStore } from "#src/engine/storage/store.ts";
import type { SyncSql } from "#src/engine/storage/syncSql.ts";

/**
 * Seeded storage faults for the engine's stores, as SQLite and the Durable
 * Object runtime can fail: a write refused before it happens (`SQLITE_BUSY`,
 * a storage reset), or an exception after the write landed (the commit went
 * through, the caller never heard). A fault is decided per write by a seeded
 * generator, so a failing seed replays exactly.
 */
export type FaultKind = "before" | "after";

export interface FaultSwitch {
  /** Chance of a fault per write while on (0 when off). */
  rate: number;
  /** Faults injected so far, by kind. */
  readonly injected: Record<FaultKind, number>;
  /** The next fault, if any, for one write. */
  next(): FaultKind | null;
}

export function faultSwitch(seed: number, rate: number): FaultSwitch {
  const { next: random } = seededRandom(seed);
  const injected = { before: 0, after: 0 };
  return {
    rate,
    injected,
    next() {
      if (this.rate === 0 || random() >= this.rate) return null;
      const kind: FaultKind = random() < 0.5 ? "before" : "after";
      injected[kind]++;
      return kind;
    },
  };
}

export class InjectedStorageFault extends Error {
  override name = "InjectedStorageFault";
  readonly kind: FaultKind;
  constructor(kind: FaultKind) {
    super(kind === "before" ? "SQLITE_BUSY: database is locked (injected)" : "storage reset after commit (injected)");
    this.kind = kind;
  }
}

/**
 * SyncSql with faults on writes: `before` throws instead of running the
 * statement or transaction; `after` runs it (a transaction commits) and
 * then throws. Inside a transaction a fault is `before` whatever its kind
 * (SQLite rolls the whole transaction back), so only outermost writes can
 * land and still throw.
 */
export function faultySql(inner: SyncSql, faults: FaultSwitch): SyncSql {
  let depth = 0;
  const write = <T>(work: () => T): T => {
    const fault = faults.next();
    if (fault === "before" || (fault === "after" && depth > 0)) throw new InjectedStorageFault("before");
    const result = work();
    if (fault === "after") throw new InjectedStorageFault("after");
    return result;
  };
  return {
    all: (sql, ...params) => inner.all(sql, ...params),
    run: (sql, ...params) =>
      /^\s*(SELECT|PRAGMA)/i.test(sql) ? inner.run(sql, ...params) : write(() => inner.run(sql, ...params)),
    script: (sql) => inner.script(sql),
    transaction(fn) {
      return write(() => {
        depth++;
        try {
          return inner.transaction(fn);
        } finally {
          depth--;
        }
      });
    },
  };
}

/** A store whose appends and creations fail as {@link faultySql}'s writes do (for the in-memory store). */
export function faultyStore<S extends WorkflowEventStore>(inner: S, faults: FaultSwitch): S {
  const write = <T>(work: () => T): T => {
    const fault = faults.next();
    if (fault === "before") throw new InjectedStorageFault("before");
    const result = work();
    if (fault === "after") throw new InjectedStorageFault("after");
    return result;
  };
  return new Proxy(inner, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property === "append") return (events: StoredEvent[]): AppendResult => write(() => target.append(events));
      if (property === "createRunIfNoActive")
        return (created: StoredEvent, options?: CreateRunStoreOptions) =>
          write(() => target.createRunIfNoActive(created, options));
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
