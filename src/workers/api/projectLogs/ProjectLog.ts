import { DurableObject } from "cloudflare:workers";
import {
  type DecodedSourceMap,
  decodeSourceMap,
  mapStackPositions,
  type SourceMapJSON,
} from "../../../core/sourceMap.ts";
import type { LogEntry, NewLogEntry } from "./logEntry.ts";
import { budgetedEntries, flushedWindows, REQUEST_WINDOW_MS, type WindowCount } from "./requestBudget.ts";

/** The newest of the project's own lines and errors a log keeps; older ones are dropped as new ones come. */
export const LOG_RETENTION = 1000;
/** The newest request lines (and counts of requests) a log keeps, apart: requests never evict the project's lines. */
export const REQUEST_LINE_RETENTION = 1000;
/** The entries of the request budget; every other kind is the project's own. */
const REQUEST_KINDS = "('request', 'requests_skipped')";
/** The most entries one read answers. */
export const MAX_LOG_READ = 500;
/** The longest a read waits for a new entry (a follower asks again after it). */
export const MAX_LOG_WAIT_MS = 25_000;
/** A source map is kept in rows of at most this many characters (a SQLite row holds 2 MB). */
const MAP_PART_CHARS = 512 * 1024;
/** The versions whose source maps a log keeps (a run's stack is mapped with its own version's). */
export const MAPS_KEPT = 5;
/** What a bundle frame says when the map of the version that threw it is no longer kept. */
export const OLDER_BUILD = "(from an older build: its source map is no longer kept)";

/**
 * One actor per project (named by its id): the project's log, fed by the
 * API worker's Tail Worker handler (its requests, console output and
 * uncaught exceptions, see traceEntries.ts) and read by `GET
 * /projects/:slug/logs` (`platform logs`, the console's Logs view). It keeps
 * the newest {@link LOG_RETENTION} of the project's lines and errors and,
 * apart, the newest {@link REQUEST_LINE_RETENTION} request lines, of which a
 * window keeps a few and counts the rest (requestBudget.ts): a flood of
 * requests evicts no line the project wrote. Entries are in its own SQLite,
 * numbered in order (`seq`); it holds a read for up to {@link MAX_LOG_WAIT_MS} until a
 * new entry comes (a long poll). It also keeps the source map of the
 * project's current version (`platform push` sends it; `platform dev` sends
 * each build's) and points positions in the bundle at the project's sources
 * (`src/index.ts:12:11`): in the stacks it stores, and in the stacks the API
 * shows in a run's view (a failed step's error).
 */
export class ProjectLog extends DurableObject {
  readonly #sql: SqlStorage;
  #waiters = new Set<() => void>();
  /** Decoded source maps by the time their version began (null: a version with none), as read from storage. */
  #maps = new Map<number, { decoded: DecodedSourceMap; bundle: string } | null>();

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env as never);
    this.#sql = ctx.storage.sql;
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS log_entries (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, entry TEXT NOT NULL)",
    );
    this.#sql.exec("CREATE TABLE IF NOT EXISTS source_map (part INTEGER PRIMARY KEY, text TEXT NOT NULL)");
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS source_maps (since INTEGER NOT NULL, part INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (since, part))",
    );
    // A log from before maps were kept by version: its one map is the oldest version (since 0).
    this.#sql.exec("INSERT OR IGNORE INTO source_maps (since, part, text) SELECT 0, part, text FROM source_map");
    this.#sql.exec("DELETE FROM source_map");
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS request_windows (bucket INTEGER PRIMARY KEY, kept INTEGER NOT NULL, skipped INTEGER NOT NULL)",
    );
  }

  /**
   * Adds entries in order (their stacks mapped, requests within their budget), drops what falls out of
   * each retention, wakes waiting reads. Requests counted and not yet written out are, at the latest,
   * by the alarm a window after.
   */
  async append(entries: NewLogEntry[]): Promise<void> {
    const windows = this.#windows();
    this.#store(budgetedEntries(entries, windows));
    this.#saveWindows(windows);
    if ([...windows.values()].some((count) => count.skipped > 0) && (await this.ctx.storage.getAlarm()) === null)
      await this.ctx.storage.setAlarm(Date.now() + REQUEST_WINDOW_MS);
  }

  /** A window after a flood: its last count is written out, though no later line came to do it. */
  override alarm(): void {
    const windows = this.#windows();
    this.#store(flushedWindows(windows));
    this.#saveWindows(windows);
  }

  #store(entries: NewLogEntry[]): void {
    if (entries.length === 0) return;
    for (const entry of entries) {
      const mapped =
        entry.kind === "request" || entry.kind === "requests_skipped"
          ? entry
          : { ...entry, ...(entry.stack ? { stack: this.#mapped(entry.stack, entry.at) } : {}) };
      this.#sql.exec("INSERT INTO log_entries (at, entry) VALUES (?, ?)", entry.at, JSON.stringify(mapped));
    }
    this.#dropOlderThan(`json_extract(entry, '$.kind') IN ${REQUEST_KINDS}`, REQUEST_LINE_RETENTION);
    this.#dropOlderThan(`json_extract(entry, '$.kind') NOT IN ${REQUEST_KINDS}`, LOG_RETENTION);
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const wake of waiters) wake();
  }

  /**
   * Entries after `after` (oldest first, at most `limit`), or, without
   * `after`, the newest `limit`. With nothing after `after`, waits up to
   * `waitMS` for something to come. `cursor` is what to pass as `after` next.
   */
  async read(query: {
    after?: number;
    limit: number;
    waitMS: number;
  }): Promise<{ entries: LogEntry[]; cursor: number }> {
    const limit = Math.min(Math.max(1, query.limit), MAX_LOG_READ);
    if (query.after === undefined) {
      const rows = this.#rows("SELECT seq, entry FROM log_entries ORDER BY seq DESC LIMIT ?", limit).reverse();
      return { entries: rows, cursor: rows.at(-1)?.seq ?? this.#lastSeq() };
    }
    let rows = this.#after(query.after, limit);
    if (rows.length === 0 && query.waitMS > 0) {
      await this.#nextAppend(Math.min(query.waitMS, MAX_LOG_WAIT_MS));
      rows = this.#after(query.after, limit);
    }
    // An `after` ahead of the log (a log that was emptied) starts again from what there is.
    return { entries: rows, cursor: rows.at(-1)?.seq ?? Math.min(query.after, this.#lastSeq()) };
  }

  /**
   * The source map of the version that runs from `since` on (`bundle`: the module name stacks call
   * it by, e.g. `worker.js`); null: a version with none. The maps of the {@link MAPS_KEPT} newest
   * versions are kept, so a stack is mapped with the version that threw it.
   */
  setSourceMap(map: SourceMapJSON | null, bundle = "worker.js", since = Date.now()): void {
    const at = Math.max(since, this.#newestSince() + 1);
    const text = JSON.stringify(map ? { bundle, map } : null);
    for (let part = 0; part * MAP_PART_CHARS < text.length; part++)
      this.#sql.exec(
        "INSERT INTO source_maps (since, part, text) VALUES (?, ?, ?)",
        at,
        part,
        text.slice(part * MAP_PART_CHARS, (part + 1) * MAP_PART_CHARS),
      );
    this.#sql.exec(
      "DELETE FROM source_maps WHERE since < (SELECT since FROM (SELECT DISTINCT since FROM source_maps) ORDER BY since DESC LIMIT 1 OFFSET ?)",
      MAPS_KEPT - 1,
    );
    this.#maps.clear();
  }

  /**
   * Each stack with the bundle's positions pointed at the sources, by the map of the version that ran
   * when it was thrown (`at[i]`; the newest without it). A stack older than every kept map has its
   * bundle frames marked as from an older build; with no map at all, stacks stay as they are.
   */
  mapStacks(stacks: string[], at: (number | undefined)[] = []): string[] {
    return stacks.map((stack, i) => this.#mapped(stack, at[i]));
  }

  #mapped(text: string, at?: number): string {
    const since = this.#sinceAt(at);
    if (since === null) return text;
    if (since === undefined) return text.replace(/(worker\.js:\d+:\d+\)?)$/gm, `$1 ${OLDER_BUILD}`);
    const map = this.#loadedMap(since);
    return map ? mapStackPositions(text, map.decoded, map.bundle) : text;
  }

  /** The version current at `at` (the newest without it); undefined: older than every kept one; null: none kept. */
  #sinceAt(at?: number): number | null | undefined {
    const versions = this.#sql
      .exec<{ since: number }>("SELECT DISTINCT since FROM source_maps ORDER BY since DESC")
      .toArray();
    if (versions.length === 0) return null;
    if (at === undefined) return versions[0]!.since;
    const found = versions.find((v) => v.since <= at);
    if (found) return found.since;
    // Older than the oldest kept version: its own map was dropped, unless none ever was (the oldest is the first).
    return versions.length < MAPS_KEPT ? versions.at(-1)!.since : undefined;
  }

  #newestSince(): number {
    return this.#sql.exec<{ since: number | null }>("SELECT MAX(since) AS since FROM source_maps").one().since ?? -1;
  }

  #loadedMap(since: number): { decoded: DecodedSourceMap; bundle: string } | null {
    const cached = this.#maps.get(since);
    if (cached !== undefined) return cached;
    const parts = this.#sql
      .exec<{ text: string }>("SELECT text FROM source_maps WHERE since = ? ORDER BY part", since)
      .toArray();
    const stored = JSON.parse(parts.map((p) => p.text).join("") || "null") as {
      bundle: string;
      map: SourceMapJSON;
    } | null;
    const loaded = stored ? { decoded: decodeSourceMap(stored.map), bundle: stored.bundle } : null;
    this.#maps.set(since, loaded);
    return loaded;
  }

  /** Drops the entries matching `lane` but its newest `keep`. */
  #dropOlderThan(lane: string, keep: number): void {
    this.#sql.exec(
      `DELETE FROM log_entries WHERE ${lane} AND seq <= (SELECT seq FROM log_entries WHERE ${lane} ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
      keep,
    );
  }

  #windows(): Map<number, WindowCount> {
    const rows = this.#sql
      .exec<{ bucket: number; kept: number; skipped: number }>("SELECT bucket, kept, skipped FROM request_windows")
      .toArray();
    return new Map(rows.map(({ bucket, kept, skipped }) => [bucket, { kept, skipped }]));
  }

  #saveWindows(windows: Map<number, WindowCount>): void {
    this.#sql.exec("DELETE FROM request_windows");
    for (const [window, { kept, skipped }] of windows)
      this.#sql.exec("INSERT INTO request_windows (bucket, kept, skipped) VALUES (?, ?, ?)", window, kept, skipped);
  }

  #after(after: number, limit: number): LogEntry[] {
    return this.#rows("SELECT seq, entry FROM log_entries WHERE seq > ? ORDER BY seq LIMIT ?", after, limit);
  }

  #rows(query: string, ...bindings: number[]): LogEntry[] {
    return this.#sql
      .exec<{ seq: number; entry: string }>(query, ...bindings)
      .toArray()
      .map((row) => ({ seq: row.seq, ...(JSON.parse(row.entry) as NewLogEntry) }));
  }

  #lastSeq(): number {
    return this.#sql.exec<{ seq: number | null }>("SELECT MAX(seq) AS seq FROM log_entries").one().seq ?? 0;
  }

  #nextAppend(waitMS: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, waitMS);
      this.#waiters.add(done);
    });
  }
}
