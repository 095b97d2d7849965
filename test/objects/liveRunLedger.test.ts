/**
 * The live-run budget's rules (src/objects/liveRunLedger.ts), on node:sqlite: each row is a
 * sequence of holds and releases on one account's ledger, and what each answers.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";
import { createLiveRunLedger, type HoldOutcome } from "#src/objects/liveRunLedger.ts";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";

type Op =
  | { hold: string[]; project?: number; cap?: number; answers: HoldOutcome }
  | { release: string[]; project?: number; answers: number };

const ledger = () => createLiveRunLedger(nodeSyncSql(new DatabaseSync(":memory:")));
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

const CASES: { name: string; ops: Op[]; live: number }[] = [
  {
    name: "holds up to the cap, all at once",
    ops: [{ hold: ids("r", 5), cap: 5, answers: { held: true, added: ids("r", 5), live: 5 } }],
    live: 5,
  },
  {
    name: "a batch that would pass the cap is refused whole, and holds nothing",
    ops: [
      { hold: ids("a", 3), cap: 5, answers: { held: true, added: ids("a", 3), live: 3 } },
      { hold: ids("b", 3), cap: 5, answers: { held: false, live: 3, asked: 3 } },
      { hold: ids("b", 2), cap: 5, answers: { held: true, added: ids("b", 2), live: 5 } },
    ],
    live: 5,
  },
  {
    name: "holding an id held already adds nothing and is never refused (a retried start counts once)",
    ops: [
      { hold: ["x", "y"], cap: 2, answers: { held: true, added: ["x", "y"], live: 2 } },
      { hold: ["x", "y"], cap: 2, answers: { held: true, added: [], live: 2 } },
      { hold: ["y"], cap: 1, answers: { held: true, added: [], live: 2 } },
    ],
    live: 2,
  },
  {
    name: "a batch mixing held and new ids counts only the new ones against the cap",
    ops: [
      { hold: ["x"], cap: 2, answers: { held: true, added: ["x"], live: 1 } },
      { hold: ["x", "y"], cap: 2, answers: { held: true, added: ["y"], live: 2 } },
      { hold: ["x", "z"], cap: 2, answers: { held: false, live: 2, asked: 1 } },
    ],
    live: 2,
  },
  {
    name: "a release frees the slot once: a duplicate end report frees nothing",
    ops: [
      { hold: ["x", "y"], cap: 2, answers: { held: true, added: ["x", "y"], live: 2 } },
      { release: ["x"], answers: 1 },
      { release: ["x"], answers: 0 },
      { hold: ["z"], cap: 2, answers: { held: true, added: ["z"], live: 2 } },
    ],
    live: 2,
  },
  {
    name: "releasing an id never held frees nothing",
    ops: [
      { hold: ["x"], cap: 1, answers: { held: true, added: ["x"], live: 1 } },
      { release: ["nobody", "nothing"], answers: 0 },
    ],
    live: 1,
  },
  {
    name: "a project cannot release another project's runs of the same id",
    ops: [
      { hold: ["x"], project: 1, cap: 2, answers: { held: true, added: ["x"], live: 1 } },
      { release: ["x"], project: 2, answers: 0 },
      { hold: ["x"], project: 2, cap: 2, answers: { held: true, added: ["x"], live: 2 } },
      { release: ["x"], project: 1, answers: 1 },
    ],
    live: 1,
  },
  {
    name: "the account's projects share the cap",
    ops: [
      { hold: ["p1"], project: 1, cap: 2, answers: { held: true, added: ["p1"], live: 1 } },
      { hold: ["p2"], project: 2, cap: 2, answers: { held: true, added: ["p2"], live: 2 } },
      { hold: ["p3"], project: 3, cap: 2, answers: { held: false, live: 2, asked: 1 } },
    ],
    live: 2,
  },
  {
    name: "duplicate ids in one call count once",
    ops: [
      { hold: ["x", "x", "x"], cap: 1, answers: { held: true, added: ["x"], live: 1 } },
      { release: ["x", "x"], answers: 1 },
    ],
    live: 0,
  },
];

describe("live-run ledger", () => {
  it.each(CASES)("$name", ({ ops, live }) => {
    const account = ledger();
    for (const op of ops) {
      if ("hold" in op) expect(account.hold(op.project ?? 1, op.hold, op.cap ?? 10)).toEqual(op.answers);
      else expect(account.release(op.project ?? 1, op.release)).toBe(op.answers);
    }
    expect(account.live()).toBe(live);
  });

  it("a tenant that never releases cannot hold more than the cap, however often it asks", () => {
    const account = ledger();
    let refused = 0;
    for (let i = 0; i < 50; i++) if (!account.hold(1, ids(`batch${i}-`, 3), 10).held) refused++;
    expect(account.live()).toBe(9);
    expect(refused).toBe(47);
    expect(account.hold(1, ["one-more"], 10)).toEqual({ held: true, added: ["one-more"], live: 10 });
    expect(account.hold(1, ["past"], 10)).toEqual({ held: false, live: 10, asked: 1 });
  });

  it("a hold whose transaction fails counts nothing: the count stays what the table holds", () => {
    const db = new DatabaseSync(":memory:");
    const sql = nodeSyncSql(db);
    let failOn: string | null = null;
    const account = createLiveRunLedger({
      ...sql,
      run: (query, ...params) => {
        if (failOn !== null && params.includes(failOn)) throw new Error("disk I/O error");
        sql.run(query, ...params);
      },
    });
    expect(account.hold(1, ["a", "b"], 10)).toMatchObject({ held: true, live: 2 });
    failOn = "d";
    expect(() => account.hold(1, ["c", "d"], 10)).toThrow("disk I/O error");
    expect(() => account.release(1, ["a", "d"])).not.toThrow();
    failOn = "b";
    expect(() => account.release(1, ["b"])).toThrow("disk I/O error");
    const stored = () => Number(db.prepare("SELECT COUNT(*) AS n FROM live_runs").get()?.n);
    expect(stored()).toBe(1);
    expect(account.live()).toBe(1);
    failOn = null;
    expect(account.hold(1, ["c", "d"], 3)).toEqual({ held: true, added: ["c", "d"], live: 3 });
    expect(stored()).toBe(3);
  });

  it("keeps the slots of a ledger made before its table lost the rowid", () => {
    const db = new DatabaseSync(":memory:");
    db.exec(
      "CREATE TABLE live_runs (project_id INTEGER NOT NULL, run_id TEXT NOT NULL, PRIMARY KEY (project_id, run_id))",
    );
    db.exec("INSERT INTO live_runs VALUES (1, 'old-a'), (1, 'old-b')");
    const account = createLiveRunLedger(nodeSyncSql(db));
    expect(account.live()).toBe(2);
    expect(account.hold(1, ["old-a", "new"], 3)).toEqual({ held: true, added: ["new"], live: 3 });
    expect(account.release(1, ["old-b"])).toBe(1);
    expect(account.live()).toBe(2);
  });
});
