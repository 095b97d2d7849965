import { randomUUID } from "node:crypto";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { RunListQuery } from "../../src/engine/storage/runQuery.ts";
import { createSqlRunIndex } from "../../src/engine/storage/sqlRunIndex.ts";
import type { RunReport, RunStatus } from "../../src/engine/storage/store.ts";
import { nodeSyncSql } from "../../src/runtime/node/nodeSyncSql.ts";
import { median, round } from "../lib/stats.ts";

/**
 * Section R: run search (`workflow.list` with filters). The same SQL run
 * index the Durable Object backend's index actor and the node:sqlite store
 * keep (src/engine/storage/sqlRunIndex.ts), filled with 1,000 and with 100,000 runs
 * of the same mix, in a SQLite file each; one filtered page of 50 timed per
 * query (median of many). The issue's target: a filtered page costs at most
 * 3× more on 100,000 runs than on 1,000.
 */

const SIZES = [1_000, 100_000] as const;
const PAGE = 50;
const REPEATS = 300;
/** One run started per second, the newest at `NOW`. */
const NOW = Date.UTC(2026, 10, 25, 12, 0, 0);
export const SEARCH_TARGET_RATIO = 3;

/** The mix of runs: what a busy project's index holds (deterministic: the i-th run is always the same kind). */
function reportOf(i: number, total: number): RunReport {
  const createdAt = NOW - (total - i) * 1000;
  const name = ["checkout", "checkout", "signup", "report", "checkout"][i % 5]!;
  const roll = (i * 7919) % 100;
  const status: RunStatus =
    roll < 5 ? "running" : roll < 6 ? "paused" : roll < 16 ? "failed" : roll < 20 ? "cancelled" : "completed";
  const step = status === "completed" ? "finish" : roll % 2 === 0 ? "charge" : "ship";
  const error = status === "failed" ? (roll % 4 === 0 ? "card_declined: insufficient funds" : "timeout") : undefined;
  const ended = status === "completed" || status === "failed" || status === "cancelled";
  return {
    id: randomUUID(),
    workflowId: `w-${i}`,
    name,
    status,
    step,
    version: `v${1 + Math.floor((i / total) * 5)}`,
    ...(error ? { error } : {}),
    createdAt,
    updatedAt: createdAt + 500,
    ...(ended ? { expiresAt: createdAt + 30 * 86_400_000 } : {}),
    lastSeq: 6,
  };
}

interface QueryCase {
  label: string;
  query: (sample: { idPrefix: string; cursor: string }) => RunListQuery;
}

const QUERIES: QueryCase[] = [
  { label: "no filter", query: () => ({ limit: PAGE }) },
  {
    label: "--status failed --step charge --error card_declined",
    query: () => ({ status: "failed", step: "charge", error: "card_declined", limit: PAGE }),
  },
  { label: "--name checkout --status failed", query: () => ({ name: "checkout", status: "failed", limit: PAGE }) },
  {
    label: "--status running --since 2h",
    query: () => ({ status: "running", since: NOW - 2 * 3_600_000, limit: PAGE }),
  },
  { label: "--version v5 --status completed", query: () => ({ version: "v5", status: "completed", limit: PAGE }) },
  { label: "--id-prefix <8 chars of one id>", query: ({ idPrefix }) => ({ idPrefix, limit: PAGE }) },
  { label: "--status failed, page 2 (cursor)", query: ({ cursor }) => ({ status: "failed", cursor, limit: PAGE }) },
];

export interface SearchFigures {
  page: number;
  repeats: number;
  sizes: readonly number[];
  fillSeconds: Record<string, number>;
  queries: { label: string; microseconds: Record<string, number>; rows: Record<string, number>; ratio: number }[];
  worstRatio: number;
  target: number;
}

export async function benchSearch(dir: string, progress: (line: string) => void): Promise<SearchFigures> {
  const perSize = new Map<number, { micros: number[]; rows: number[] }>();
  const fillSeconds: Record<string, number> = {};
  for (const size of SIZES) {
    const db = new DatabaseSync(path.join(dir, `search-${size}.sqlite`));
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
    const sql = nodeSyncSql(db);
    const index = createSqlRunIndex(sql);
    const began = performance.now();
    const reports = Array.from({ length: size }, (_, i) => reportOf(i, size));
    for (let i = 0; i < size; i += 5000) sql.transaction(() => index.record(reports.slice(i, i + 5000)));
    fillSeconds[String(size)] = round((performance.now() - began) / 1000, 2);
    progress(`${size} runs indexed in ${fillSeconds[String(size)]} s`);
    const sample = {
      idPrefix: reports[Math.floor(size / 2)]!.id.slice(0, 8),
      cursor: index.listRuns({ status: "failed", limit: PAGE }).cursor ?? "",
    };
    const micros: number[] = [];
    const rows: number[] = [];
    for (const { query } of QUERIES) {
      const q = query(sample);
      for (let i = 0; i < 20; i++) index.listRuns(q);
      const samples: number[] = [];
      let found = 0;
      for (let i = 0; i < REPEATS; i++) {
        const t = performance.now();
        found = index.listRuns(q).runs.length;
        samples.push((performance.now() - t) * 1000);
      }
      micros.push(median(samples));
      rows.push(found);
    }
    perSize.set(size, { micros, rows });
    db.close();
  }
  const [small, large] = SIZES.map((size) => perSize.get(size)!);
  const queries = QUERIES.map(({ label }, i) => ({
    label,
    microseconds: { [String(SIZES[0])]: round(small!.micros[i]!, 1), [String(SIZES[1])]: round(large!.micros[i]!, 1) },
    rows: { [String(SIZES[0])]: small!.rows[i]!, [String(SIZES[1])]: large!.rows[i]! },
    ratio: round(large!.micros[i]! / small!.micros[i]!, 2),
  }));
  return {
    page: PAGE,
    repeats: REPEATS,
    sizes: SIZES,
    fillSeconds,
    queries,
    worstRatio: Math.max(...queries.map((q) => q.ratio)),
    target: SEARCH_TARGET_RATIO,
  };
}

export function formatSearch(figures: SearchFigures | { error: string }): string {
  if ("error" in figures) return `R. Search: FAILED (${figures.error})`;
  const [a, b] = figures.sizes.map(String) as [string, string];
  const lines = [
    `R. Search (workflow.list with filters on the SQL run index every backend keeps; a page of ${figures.page}, median of ${figures.repeats})`,
    `    ${"filter".padEnd(52)} ${`${a} runs`.padStart(12)} ${`${b} runs`.padStart(14)} ${"ratio".padStart(6)}`,
    ...figures.queries.map(
      (q) =>
        `    ${q.label.padEnd(52)} ${`${q.microseconds[a]} µs`.padStart(12)} ${`${q.microseconds[b]} µs`.padStart(14)} ${`${q.ratio}×`.padStart(6)}`,
    ),
    `  worst ratio ${figures.worstRatio}× (target: at most ${figures.target}×) ${figures.worstRatio <= figures.target ? "MET" : "NOT MET"}`,
  ];
  return lines.join("\n");
}
