import path from "node:path";
import { checkHistory, formatVerdict, type InvariantResult, runsNamedBy } from "./chaosChecker.ts";
import { planClients, runClients } from "./chaosClients.ts";
import { startDevPlatform } from "./chaosDevPlatform.ts";
import type { ChaosHistory, HistoryRun } from "./chaosHistory.ts";
import type { ChaosPlatform } from "./chaosPlatform.ts";
import { startUpPlatform } from "./chaosUpPlatform.ts";
import { startLedgerServer } from "./ledgerServer.ts";
import type { ChaosFetch } from "./loopbackFetch.ts";
import { describeFault, type Fault, planNemesis, runNemesis } from "./nemesis.ts";

/** `platform dev` (workerd), `platform dev --node`, or the project pushed to `platform up`. */
export type ChaosBackend = "workerd" | "node" | "up";

export interface ChaosOptions {
  seed: number;
  kills: number;
  /** Pushes of a compatible new build mid-run (the `up` backend only). */
  pushes: number;
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

const ACTIVE = new Set(["queued", "running", "waiting", "paused"]);
/** The chaos project's concurrency limit (its `keyed` workflow). */
const CONCURRENCY = [{ workflow: "keyed", limit: 2 }];
/** The chaos project's rollbacks (its `rolled` workflow). */
const ROLLBACKS = [{ workflow: "rolled", steps: ["reserve", "charge"] }];

async function getJson<T>(send: ChaosFetch, url: string): Promise<T> {
  const response = await send(url, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`GET ${url} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Every run of the project, each read once it has ended (or as it is at `deadline`). */
async function collectRuns({ url, fetch }: ChaosPlatform, deadline: number): Promise<HistoryRun[]> {
  for (;;) {
    const { runs } = await getJson<{ runs: { id: string; status: string }[] }>(fetch, `${url}/runs`);
    if (runs.every((run) => !ACTIVE.has(run.status)) || Date.now() > deadline) {
      const views: HistoryRun[] = [];
      for (const { id } of runs) {
        let view = await getJson<HistoryRun>(fetch, `${url}/runs/${encodeURIComponent(id)}`);
        // A schedule's tick may have started a run since the list was read.
        while (ACTIVE.has(view.status) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          view = await getJson<HistoryRun>(fetch, `${url}/runs/${encodeURIComponent(id)}`);
        }
        views.push(view);
      }
      return views;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function replayCommand(options: ChaosOptions): string {
  const pushes = options.backend === "up" ? ` --pushes ${options.pushes}` : "";
  const workload = ` --clients ${options.clients} --ops ${options.opsPerClient}`;
  return `npm run chaos -- --seed ${options.seed} --kills ${options.kills}${pushes}${workload} --backend ${options.backend}`;
}

/** Starts the backend's platform over the chaos project, its steps reporting to `ledgerUrl`. */
function startPlatform(options: ChaosOptions, ledgerUrl: string): Promise<ChaosPlatform> {
  const dir = path.join(options.workDir, `chaos-${options.backend}`);
  if (options.backend === "up") return startUpPlatform({ dir, port: options.port, ledgerUrl, log: options.log });
  return startDevPlatform({ dir, node: options.backend === "node", port: options.port, ledgerUrl });
}

/**
 * One seeded chaos run: the chaos project under `platform dev` (workerd or `--node`) or pushed to `platform
 * up`, concurrent clients, the nemesis killing and pausing it (state persists in the project's .platform/ or
 * up's state folder) and, under up, pushing compatible new builds, then the checker over the runs' own logs,
 * what the clients were told and the ledger.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const { seed, kills, backend, log } = options;
  const faults = planNemesis(seed, kills, backend === "up" ? options.pushes : 0);
  const header = [
    `chaos seed=${seed} backend=${backend} kills=${kills} clients=${options.clients}x${options.opsPerClient}`,
    `nemesis: ${faults.map(describeFault).join(", ")}`,
  ];
  for (const line of header) log(line);

  // On loopback for every backend: `platform up`, which refuses a project's fetch of this machine, is started
  // with `--allow-outbound` for the ledger's address alone.
  const ledger = await startLedgerServer();
  let platform: ChaosPlatform | undefined;
  const timed = { restarts: [] as number[], pushes: [] as number[] };
  const pushes: ChaosHistory["pushes"] = [];
  try {
    platform = await startPlatform(options, ledger.url);
    const { target } = platform;
    const startedAt = Date.now();
    const deadline = () => Date.now() + options.settleTimeoutMS;
    // The clients' time runs from the last fault: a restart or a push of `platform up` takes most of a minute.
    let faultsEndedAt: number | undefined;
    const clientDeadline = () => (faultsEndedAt ?? Date.now()) + options.settleTimeoutMS;
    const [, record] = await Promise.all([
      runNemesis(
        faults,
        {
          pid: () => target.pid(),
          restart: () => timedCall(timed.restarts, () => target.restart()),
          ...(target.push
            ? {
                push: async (build: number) => {
                  await timedCall(timed.pushes, () => target.push!(build));
                  pushes.push({ build, at: Date.now() });
                },
              }
            : {}),
        },
        log,
      ).then(() => {
        faultsEndedAt = Date.now();
      }),
      runClients(platform, planClients(seed, options.clients, options.opsPerClient), seed, clientDeadline, log),
    ]);
    log(`faults done after ${Math.round((Date.now() - startedAt) / 1000)} s; waiting for every run to end`);
    const runs = await collectRuns(platform, deadline());
    const history: ChaosHistory = {
      runs,
      ...record,
      ledger: ledger.attempts(),
      concurrency: CONCURRENCY,
      rollbacks: ROLLBACKS,
      pushes,
    };
    const results = checkHistory(history);
    const passed = results.every((result) => result.violations.length === 0);
    const lines = [
      ...header,
      `restarts: ${describeTimes(timed.restarts)}${backend === "up" ? `, pushes: ${describeTimes(timed.pushes)}` : ""}, ${Math.round((Date.now() - startedAt) / 1000)} s in all`,
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
    await platform?.stop();
    await ledger.close();
  }
}

async function timedCall(times: number[], call: () => Promise<void>): Promise<void> {
  const began = Date.now();
  await call();
  times.push(Date.now() - began);
}

/** "3 (12, 9, 10 s each)" */
function describeTimes(times: number[]): string {
  return `${times.length} (${times.map((ms) => Math.round(ms / 1000)).join(", ")} s each)`;
}
