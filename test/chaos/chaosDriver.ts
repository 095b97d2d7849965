import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { type DevProcess, startDev } from "#test/support/e2e/cliProcess.ts";
import { initProject, killTree } from "#test/support/e2e/workflowProjects.ts";
import { checkHistory, formatVerdict, type InvariantResult, runsNamedBy } from "./chaosChecker.ts";
import { planClients, runClients } from "./chaosClients.ts";
import type { ChaosHistory, HistoryRun } from "./chaosHistory.ts";
import { startLedgerServer } from "./ledgerServer.ts";
import { describeFault, type Fault, planNemesis, runNemesis } from "./nemesis.ts";

export type ChaosBackend = "workerd" | "node";

export interface ChaosOptions {
  seed: number;
  kills: number;
  backend: ChaosBackend;
  port: number;
  /** A folder the project is created in (`<workDir>/chaos-<backend>`). */
  workDir: string;
  clients: number;
  opsPerClient: number;
  log: (line: string) => void;
  /** How long the clients may retry, and the runs may take to end after the last fault. */
  settleTimeoutMS: number;
}

export interface ChaosReport {
  passed: boolean;
  faults: Fault[];
  results: InvariantResult[];
  history: ChaosHistory;
  /** The seed, the schedule, each invariant with its count and, on failure, the failing runs' logs. */
  text: string;
}

const PROJECT = path.join(import.meta.dirname, "project/src/index.ts");
const ACTIVE = new Set(["queued", "running", "waiting", "paused"]);
/** The chaos project's concurrency limit (its `keyed` workflow). */
const CONCURRENCY = [{ workflow: "keyed", limit: 2 }];
/** The chaos project's rollbacks (its `rolled` workflow). */
const ROLLBACKS = [{ workflow: "rolled", steps: ["reserve", "charge"] }];

async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every run of the project, each read once it has ended (or as it is at `deadline`). */
async function collectRuns(url: string, deadline: number): Promise<HistoryRun[]> {
  for (;;) {
    const { runs } = await getJson<{ runs: { id: string; status: string }[] }>(`${url}/runs`);
    if (runs.every((run) => !ACTIVE.has(run.status)) || Date.now() > deadline) {
      const views: HistoryRun[] = [];
      for (const { id } of runs) {
        let view = await getJson<HistoryRun>(`${url}/runs/${encodeURIComponent(id)}`);
        // A schedule's tick may have started a run since the list was read.
        while (ACTIVE.has(view.status) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          view = await getJson<HistoryRun>(`${url}/runs/${encodeURIComponent(id)}`);
        }
        views.push(view);
      }
      return views;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function replayCommand(options: ChaosOptions): string {
  return `npm run chaos -- --seed ${options.seed} --kills ${options.kills} --backend ${options.backend}`;
}

/**
 * One seeded chaos run: the chaos project under `platform dev` (workerd or `--node`), concurrent clients,
 * the nemesis killing and pausing it (state persists in the project's .platform/), then the checker over
 * the runs' own logs, what the clients were told and the ledger.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { seed, kills, backend, port, log } = options;
  const faults = planNemesis(seed, kills);
  const header = [
    `chaos seed=${seed} backend=${backend} kills=${kills} clients=${options.clients}x${options.opsPerClient}`,
    `nemesis: ${faults.map(describeFault).join(", ")}`,
  ];
  for (const line of header) log(line);

  const ledger = await startLedgerServer();
  const dir = path.join(options.workDir, `chaos-${backend}`);
  await initProject(dir, readFileSync(PROJECT, "utf8"));
  writeFileSync(path.join(dir, ".dev.vars"), `CHAOS_LEDGER_URL=${ledger.url}\n`);
  const args = [dir, ...(backend === "node" ? ["--node"] : []), "--port", String(port)];
  let dev: DevProcess = await startDev(args, { readyTimeoutMs: 120_000 });
  const restarts: number[] = [];
  try {
    const startedAt = Date.now();
    const deadline = () => Date.now() + options.settleTimeoutMS;
    const [, record] = await Promise.all([
      runNemesis(
        faults,
        {
          pid: () => dev.child.pid!,
          restart: async () => {
            const began = Date.now();
            dev = await startDev(args, { readyTimeoutMs: 120_000 });
            restarts.push(Date.now() - began);
          },
        },
        log,
      ),
      runClients(dev.url, planClients(seed, options.clients, options.opsPerClient), seed, deadline(), log),
    ]);
    log(`faults done after ${Math.round((Date.now() - startedAt) / 1000)} s; waiting for every run to end`);
    const runs = await collectRuns(dev.url, deadline());
    const history: ChaosHistory = {
      runs,
      ...record,
      ledger: ledger.attempts(),
      concurrency: CONCURRENCY,
      rollbacks: ROLLBACKS,
    };
    const results = checkHistory(history);
    const passed = results.every((result) => result.violations.length === 0);
    const lines = [
      ...header,
      `restarts: ${restarts.length} (${restarts.map((ms) => Math.round(ms / 1000)).join(", ")} s each), ${Math.round((Date.now() - startedAt) / 1000)} s in all`,
      formatVerdict(results),
    ];
    if (!passed) {
      for (const result of results)
        for (const violation of result.violations.slice(0, 20)) lines.push(`  ${result.name}: ${violation}`);
      lines.push("failing history:");
      for (const run of runsNamedBy(results, history).slice(0, 10)) {
        lines.push(`  ${run.id} (${run.name}, ${run.status}):`);
        for (const event of run.events)
          lines.push(`    ${event.seq} ${event.at} ${event.type} ${JSON.stringify(event.payload)}`);
      }
    }
    lines.push(passed ? `PASSED seed=${seed}` : `FAILED seed=${seed}; replay: ${replayCommand(options)}`);
    return { passed, faults, results, history, text: lines.join("\n") };
  } finally {
    const stopped = dev.child.exitCode === null ? await Promise.race([dev.stop("SIGTERM"), timeout(10_000)]) : null;
    if (dev.child.exitCode === null && dev.child.signalCode === null && stopped === null)
      await killTree(dev.child.pid!);
    await ledger.close();
  }
}

function timeout(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}
