import * as esbuild from "esbuild";
import { convertV4MiniflareOptions, Log, LogLevel, Miniflare } from "miniflare";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { buildProject } from "#src/dev/cli/build/buildProject.ts";
import { applyD1Migrations } from "#src/dev/cli/dev/workerd/d1Migrations.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "#src/contracts/workerCompatibility.ts";
import { MIGRATIONS_DIR } from "#src/dev/cli/repoPaths.ts";
import {
  ed25519PublicKeyHex,
  signEd25519,
  verifyEd25519Webhook,
  type Ed25519Implementation,
} from "#src/core/crypto/ed25519.ts";
import { signWorkspaceRequest, verifyWorkspaceSignature } from "#src/plugins/workspace/workspaceSignature.ts";
import { startWorker, type WorkerHost } from "../lib/miniflareHost.ts";
import { cpuMsOf, workerdPids } from "../lib/processCpu.ts";
import { median, quantile, round } from "../lib/stats.ts";

const REPO = path.resolve(import.meta.dirname, "../..");
const PROJECT_DIR = path.join(REPO, "bench/projects/plugins");
const WORKERS_DIR = path.join(PROJECT_DIR, "workers");

type VerifyKind = Ed25519Implementation | "slack";
const KINDS: readonly VerifyKind[] = ["webcrypto", "noble", "slack"];

export interface VerifyRates {
  /** Verifications per second, median over rounds. */
  webcrypto: number;
  noble: number;
  slack: number;
  /** Checks timed per implementation (all rounds). */
  checks: Record<VerifyKind, number>;
}

export interface PluginsResults {
  bodyBytes: number;
  node: VerifyRates;
  /** Inside workerd: batches timed from Node (wall, minus an empty call) and by workerd CPU from /proc. */
  workerd: (VerifyRates & { cpuPerSecond: Record<VerifyKind, number> | null }) | { error: string };
  hotPath: {
    implementation: Ed25519Implementation;
    fasterInNode: Ed25519Implementation;
    nodeRatio: number;
    workerdRatio: number | null;
  };
  rateLimit: {
    levels: {
      concurrency: number;
      trials: number;
      decisionsPerSecond: number;
      insideDecisionsPerSecond: number | null;
      allowedPerTrial: number[];
      allowedOnSecondBatch: number[];
      retryAfterSeconds: [number, number] | null;
    }[];
    exactlyThreePerWindow: boolean;
  };
  webhook:
    | {
        events: number;
        viaFake: { ackMedianMs: number; ackP95Ms: number; handlerMedianMs: number; handlerP95Ms: number };
        direct: { ackMedianMs: number; ackP95Ms: number; handlerMedianMs: number; handlerP95Ms: number };
        handlerRuns: number;
      }
    | { error: string };
}

/** A ~400-byte Events-API-like body, the same for every check. */
function sampleBody(): string {
  const body = {
    type: 1,
    id: "1234567890123456789",
    application_id: "9876543210987654321",
    token: "a".repeat(120),
    data: { name: "bench", options: [{ name: "text", value: "hello from the plugin bench" }] },
    guild_id: "1111111111111111111",
    channel_id: "2222222222222222222",
    member: { user: { id: "3333333333333333333", username: "ada" } },
  };
  let text = JSON.stringify(body);
  // Pad to ~400 bytes.
  if (text.length < 400) text = JSON.stringify({ ...body, pad: "x".repeat(400 - text.length - 10) });
  return text;
}

interface SignedInput {
  body: string;
  timestamp: string;
  ed25519: { publicKeyHex: string; signatureHex: string };
  slack: { signingSecret: string; signature: string };
}

async function signedInput(): Promise<SignedInput> {
  const body = sampleBody();
  const timestamp = String(Math.floor(Date.now() / 1000));
  const seed = randomBytes(32).toString("hex");
  const signingSecret = randomBytes(16).toString("hex");
  return {
    body,
    timestamp,
    ed25519: { publicKeyHex: await ed25519PublicKeyHex(seed), signatureHex: await signEd25519(seed, timestamp + body) },
    slack: { signingSecret, signature: await signWorkspaceRequest(signingSecret, timestamp, body) },
  };
}

function verifyOnce(input: SignedInput, kind: VerifyKind) {
  return kind === "slack"
    ? verifyWorkspaceSignature(input.slack.signingSecret, {
        timestampHeader: input.timestamp,
        signatureHeader: input.slack.signature,
        rawBody: input.body,
      })
    : verifyEd25519Webhook(
        input.ed25519.publicKeyHex,
        { signatureHex: input.ed25519.signatureHex, timestamp: input.timestamp, rawBody: input.body },
        { implementation: kind },
      );
}

/** Node: checks in chunks until `targetMs` has passed (bounded by `maxChecks`). */
async function nodeRate(
  input: SignedInput,
  kind: VerifyKind,
  targetMs: number,
  maxChecks = 200_000,
): Promise<{ rate: number; checks: number }> {
  let checks = 0;
  const began = performance.now();
  let elapsed = 0;
  while (elapsed < targetMs && checks < maxChecks) {
    for (let i = 0; i < 50; i++) {
      const check = await verifyOnce(input, kind);
      if (!check.ok) throw new Error(`${kind} refused the bench's own signature: ${check.message}`);
    }
    checks += 50;
    elapsed = performance.now() - began;
  }
  return { rate: (checks / elapsed) * 1000, checks };
}

async function bundle(entry: string, outfile: string): Promise<string> {
  await esbuild.build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "browser",
    conditions: ["workerd", "worker", "browser"],
    target: "es2023",
    external: ["cloudflare:*", "node:*"],
    outfile,
    logLevel: "silent",
  });
  return outfile;
}

const ROUNDS = 3;

async function measureNode(input: SignedInput, progress: (line: string) => void): Promise<VerifyRates> {
  progress("verifications in Node");
  for (const kind of KINDS) await nodeRate(input, kind, 100); // warm-up (JIT, key import)
  const rates: Record<VerifyKind, number[]> = { webcrypto: [], noble: [], slack: [] };
  const checks: Record<VerifyKind, number> = { webcrypto: 0, noble: 0, slack: 0 };
  // Interleaved rounds: other work on this shared machine hits each kind alike.
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of KINDS) {
      const result = await nodeRate(input, kind, 400);
      rates[kind].push(result.rate);
      checks[kind] += result.checks;
    }
  }
  return { webcrypto: median(rates.webcrypto), noble: median(rates.noble), slack: median(rates.slack), checks };
}

async function measureWorkerd(
  input: SignedInput,
  node: VerifyRates,
  workDir: string,
  progress: (line: string) => void,
): Promise<VerifyRates & { cpuPerSecond: Record<VerifyKind, number> | null }> {
  progress("verifications in workerd");
  const scriptPath = await bundle(
    path.join(WORKERS_DIR, "crypto.ts"),
    path.join(workDir, "crypto-worker", "worker.js"),
  );
  const host = await startWorker(
    {
      name: "bench-plugin-crypto",
      scriptPath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      bindings: { VERIFY_INPUT: JSON.stringify(input) },
    },
    path.join(workDir, "crypto-state"),
  );
  try {
    const pids = workerdPids();
    const batch = async (kind: VerifyKind, n: number) => {
      const cpuBefore = cpuMsOf(pids);
      const result = await host.call<{ n: number; ok: number }>(`/verify?kind=${kind}&n=${n}`);
      const cpuAfter = cpuMsOf(pids);
      if (result.ok !== n) throw new Error(`workerd ${kind}: ${result.ok} of ${n} checks passed`);
      return { wallMs: result.outsideMs, cpuMs: cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore };
    };
    // Batches of ~0.3 s at Node's rate, bounded.
    const sizes = Object.fromEntries(
      KINDS.map((kind) => [kind, Math.max(200, Math.min(20_000, Math.round(node[kind] * 0.3)))]),
    ) as Record<VerifyKind, number>;
    for (const kind of KINDS) await batch(kind, Math.ceil(sizes[kind] / 10)); // warm-up
    const empty: number[] = [];
    const emptyCpu: number[] = [];
    for (let i = 0; i < 5; i++) {
      const e = await batch("slack", 0);
      empty.push(e.wallMs);
      if (e.cpuMs !== null) emptyCpu.push(e.cpuMs);
    }
    const overheadMs = median(empty);
    const overheadCpu = emptyCpu.length ? median(emptyCpu) : 0;
    const rates: Record<VerifyKind, number[]> = { webcrypto: [], noble: [], slack: [] };
    const cpuRates: Record<VerifyKind, number[]> = { webcrypto: [], noble: [], slack: [] };
    const checks: Record<VerifyKind, number> = { webcrypto: 0, noble: 0, slack: 0 };
    for (let r = 0; r < ROUNDS; r++) {
      for (const kind of KINDS) {
        const n = sizes[kind];
        const { wallMs, cpuMs } = await batch(kind, n);
        rates[kind].push((n / Math.max(0.001, wallMs - overheadMs)) * 1000);
        if (cpuMs !== null) cpuRates[kind].push((n / Math.max(0.001, cpuMs - overheadCpu)) * 1000);
        checks[kind] += n;
      }
    }
    return {
      webcrypto: median(rates.webcrypto),
      noble: median(rates.noble),
      slack: median(rates.slack),
      checks,
      cpuPerSecond: cpuRates.webcrypto.length
        ? { webcrypto: median(cpuRates.webcrypto), noble: median(cpuRates.noble), slack: median(cpuRates.slack) }
        : null,
    };
  } finally {
    await host.dispose();
  }
}

const RATE_LEVELS = [10, 100, 1000];
const RATE_TRIALS = 3;

async function measureRateLimiter(
  workDir: string,
  progress: (line: string) => void,
): Promise<PluginsResults["rateLimit"]> {
  progress("RateLimiter actor under concurrency");
  const scriptPath = await bundle(
    path.join(WORKERS_DIR, "rateLimiter.ts"),
    path.join(workDir, "ratelimiter-worker", "worker.js"),
  );
  const host: WorkerHost = await startWorker(
    {
      name: "bench-plugin-ratelimiter",
      scriptPath,
      compatibilityDate: COMPATIBILITY_DATE,
      compatibilityFlags: [...COMPATIBILITY_FLAGS],
      durableObjects: { RATE_LIMITER: { className: "RateLimiter", useSQLite: true } },
    },
    path.join(workDir, "ratelimiter-state"),
  );
  type Take = {
    n: number;
    allowed: number;
    refused: number;
    insideMs: number;
    retryAfterMin: number | null;
    retryAfterMax: number | null;
  };
  try {
    await host.call<Take>(`/take?n=50&project=warm-up`);
    const levels: PluginsResults["rateLimit"]["levels"] = [];
    for (const concurrency of RATE_LEVELS) {
      const rates: number[] = [];
      const inside: number[] = [];
      const allowedPerTrial: number[] = [];
      const allowedOnSecondBatch: number[] = [];
      let retryMin = Infinity;
      let retryMax = -Infinity;
      for (let trial = 0; trial < RATE_TRIALS; trial++) {
        // A fresh project (actor) per trial: its window starts empty.
        const project = `c${concurrency}-t${trial}`;
        const first = await host.call<Take>(`/take?n=${concurrency}&project=${project}`);
        rates.push((concurrency / first.outsideMs) * 1000);
        if (first.insideMs > 0) inside.push((concurrency / first.insideMs) * 1000);
        allowedPerTrial.push(first.allowed);
        // The same project again, inside the same 60 s window: nothing left.
        const second = await host.call<Take>(`/take?n=${concurrency}&project=${project}`);
        allowedOnSecondBatch.push(second.allowed);
        for (const t of [first, second]) {
          if (t.retryAfterMin !== null) retryMin = Math.min(retryMin, t.retryAfterMin);
          if (t.retryAfterMax !== null) retryMax = Math.max(retryMax, t.retryAfterMax);
        }
      }
      levels.push({
        concurrency,
        trials: RATE_TRIALS,
        decisionsPerSecond: median(rates),
        insideDecisionsPerSecond: inside.length ? median(inside) : null,
        allowedPerTrial,
        allowedOnSecondBatch,
        retryAfterSeconds: Number.isFinite(retryMin) ? [retryMin, retryMax] : null,
      });
    }
    const exactlyThreePerWindow = levels.every(
      (l) => l.allowedPerTrial.every((a) => a === 3) && l.allowedOnSecondBatch.every((a) => a === 0),
    );
    return { levels, exactlyThreePerWindow };
  } finally {
    await host.dispose();
  }
}

const WEBHOOK_EVENTS = 50;
const WEBHOOK_WARMUP = 5;
const PLUGIN = "platform-plugin-workspace";
const FAKE = "fake-slack";
const TEAM = "T0TEST";
const BOT_USER = "U0BOT0TEST";

/**
 * The workspace plugin worker, the fake Slack and the bench project in one
 * Miniflare, wired the way the local platform wires platform workers to
 * project workers (D1 `DB`, `LOCAL_SCRIPTS` + a service binding standing in
 * for the dispatch namespace). The project's `workspace.onEvent("message")`
 * handler calls BENCH_PROBE, a Node function: its arrival is "handler ran".
 */
async function measureWebhook(
  workDir: string,
  progress: (line: string) => void,
): Promise<Exclude<PluginsResults["webhook"], { error: string }>> {
  progress("webhook → handler: building the plugin, the fake and the project");
  const [pluginScript, fakeScript, build] = await Promise.all([
    bundle(path.join(REPO, "src/plugins/workspace/index.ts"), path.join(workDir, "plugin-worker", "worker.js")),
    bundle(path.join(REPO, "src/dev/fakes/workspace/index.ts"), path.join(workDir, "fake-worker", "worker.js")),
    buildProject(PROJECT_DIR, path.join(workDir, "project-build")),
  ]);
  const signingSecret = randomBytes(16).toString("hex");
  const workerSecret = randomBytes(32).toString("hex");
  const scriptName = "bench-plugins-project";
  const slug = "bench-plugins";
  const projectId = 1;
  const waiting = new Map<string, (at: number) => void>();
  let handlerRuns = 0;
  const probe = async (request: Request): Promise<Response> => {
    const at = performance.now();
    const { text } = (await request.json()) as { text: string };
    handlerRuns++;
    waiting.get(text)?.(at);
    waiting.delete(text);
    return new Response("ok");
  };
  const base = (name: string, scriptPath: string) => ({
    name,
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: [...COMPATIBILITY_FLAGS],
  });
  const logs: string[] = [];
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      cf: false,
      log: new Log(LogLevel.WARN),
      resourcePersistencePath: path.join(workDir, "webhook-state"),
      handleStructuredLogs: ({ level, message }) => {
        logs.push(`[${level}] ${message}`);
        if (logs.length > 50) logs.shift();
      },
      workers: [
        {
          ...base(PLUGIN, pluginScript),
          d1Databases: { DB: "platform-db" },
          bindings: {
            SLACK_BASE_URL: "http://slack.fake",
            SLACK_CLIENT_ID: "111.222",
            SLACK_CLIENT_SECRET: "bench-client-secret",
            SLACK_SIGNING_SECRET: signingSecret,
            WORKSPACE_PUBLIC_URL: "http://workspace.local",
            TOKEN_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
            STATE_SECRET: randomBytes(32).toString("hex"),
            LOCAL_SCRIPTS: JSON.stringify({ [scriptName]: "SCRIPT_0" }),
          },
          serviceBindings: { SCRIPT_0: scriptName, SLACK: FAKE },
        },
        {
          ...base(FAKE, fakeScript),
          bindings: {
            SLACK_CLIENT_ID: "111.222",
            SLACK_CLIENT_SECRET: "bench-client-secret",
            SLACK_SIGNING_SECRET: signingSecret,
            PLUGIN_WEBHOOK_URL: "http://workspace.local/webhook",
          },
          serviceBindings: { PLUGIN },
        },
        {
          ...base(scriptName, build.bundlePath),
          bindings: {
            PLATFORM_WORKER_SECRET: workerSecret,
            PLATFORM_PROJECT_ID: String(projectId),
            PLATFORM_PROJECT_SLUG: slug,
            PLATFORM_LOCAL: "1",
          },
          serviceBindings: { WORKSPACE_PLUGIN: PLUGIN, BENCH_PROBE: probe },
        },
      ],
    }),
  );
  try {
    await mf.ready;
    const db = await mf.getD1Database("DB", PLUGIN);
    await applyD1Migrations(db, MIGRATIONS_DIR);
    const now = Date.now();
    await db.prepare("INSERT INTO users (id, email, created_at) VALUES (1, 'bench@example.com', ?)").bind(now).run();
    await db
      .prepare(
        "INSERT INTO projects (id, slug, owner_id, worker_secret, script_name, private, created_at, updated_at) VALUES (?, ?, 1, ?, ?, 0, ?, ?)",
      )
      .bind(projectId, slug, workerSecret, scriptName, now, now)
      .run();
    // The workspace as an install leaves it claimed (the bot token is not needed to receive events).
    await db
      .prepare(
        "INSERT INTO plugin_resources (plugin_id, resource_type, project_id, external_resource_id, display_name, metadata, created_at) VALUES ('workspace', 'workspace', ?, ?, 'Bench Workspace', ?, ?)",
      )
      .bind(projectId, TEAM, JSON.stringify({ botUserId: BOT_USER }), now)
      .run();
    const plugin = await mf.getWorker(PLUGIN);
    const fake = await mf.getWorker(FAKE);

    const handled = (text: string) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(text);
          reject(
            new Error(`the handler did not run for ${text} within 10 s; worker logs: ${logs.slice(-5).join(" | ")}`),
          );
        }, 10_000);
        waiting.set(text, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });

    // Via the fake: Node asks the fake to send a message event; the fake signs it (v0 HMAC) and posts it to the plugin's /webhook.
    const viaFake = async (text: string) => {
      const ran = handled(text);
      const began = performance.now();
      const response = await fake.fetch("http://slack.fake/__fake/trigger", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ kind: "message", teamId: TEAM, text }),
      });
      const answer = (await response.json()) as { response?: { status: number; body: string } };
      const ack = performance.now() - began;
      if (answer.response?.status !== 200)
        throw new Error(
          `the plugin answered the fake's delivery with ${JSON.stringify(answer.response ?? answer).slice(0, 300)}`,
        );
      return { ack, handler: (await ran) - began };
    };
    // Direct: Node signs a Slack-shaped event itself and posts it to the plugin's /webhook.
    let seq = 0;
    const direct = async (text: string) => {
      const ts = String(Math.floor(Date.now() / 1000));
      const envelope = {
        token: "bench",
        team_id: TEAM,
        api_app_id: "A0BENCH",
        type: "event_callback",
        event_id: `EvBENCH${++seq}${randomBytes(3).toString("hex").toUpperCase()}`,
        event_time: Number(ts),
        authorizations: [{ team_id: TEAM, user_id: BOT_USER, is_bot: true }],
        event: {
          type: "message",
          channel: "C0GENERAL",
          user: "U0ALICE",
          text,
          ts: `${ts}.000100`,
          event_ts: `${ts}.000100`,
          channel_type: "channel",
        },
      };
      const body = JSON.stringify(envelope);
      const signature = await signWorkspaceRequest(signingSecret, ts, body);
      const ran = handled(text);
      const began = performance.now();
      const response = await plugin.fetch("http://workspace.local/webhook", {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "X-Slack-Request-Timestamp": ts,
          "X-Slack-Signature": signature,
        },
        body,
      });
      const answer = await response.text();
      const ack = performance.now() - began;
      if (response.status !== 200)
        throw new Error(`plugin /webhook answered ${response.status}: ${answer.slice(0, 300)}`);
      return { ack, handler: (await ran) - began };
    };

    progress("webhook → handler: warm-up");
    for (let i = 0; i < WEBHOOK_WARMUP; i++) {
      await viaFake(`warm-fake-${i}`);
      await direct(`warm-direct-${i}`);
    }
    progress(`webhook → handler: ${WEBHOOK_EVENTS} events each way, one at a time`);
    const fakeTimes: { ack: number; handler: number }[] = [];
    const directTimes: { ack: number; handler: number }[] = [];
    // Alternate the two paths so drift on the shared machine hits both alike.
    for (let i = 0; i < WEBHOOK_EVENTS; i++) {
      fakeTimes.push(await viaFake(`bench-fake-${i}`));
      directTimes.push(await direct(`bench-direct-${i}`));
    }
    const summary = (times: { ack: number; handler: number }[]) => ({
      ackMedianMs: round(median(times.map((t) => t.ack))),
      ackP95Ms: round(
        quantile(
          times.map((t) => t.ack),
          0.95,
        ),
      ),
      handlerMedianMs: round(median(times.map((t) => t.handler))),
      handlerP95Ms: round(
        quantile(
          times.map((t) => t.handler),
          0.95,
        ),
      ),
    });
    return { events: WEBHOOK_EVENTS, viaFake: summary(fakeTimes), direct: summary(directTimes), handlerRuns };
  } finally {
    await mf.dispose();
  }
}

/** Plugin figures: webhook signature checks, the per-project rate limiter, and webhook → handler latency. */
export async function benchPlugins(workDir: string, progress: (line: string) => void): Promise<PluginsResults> {
  mkdirSync(workDir, { recursive: true });
  const input = await signedInput();
  const node = await measureNode(input, progress);
  let workerd: PluginsResults["workerd"];
  try {
    workerd = await measureWorkerd(input, node, workDir, progress);
  } catch (error) {
    workerd = { error: error instanceof Error ? error.message : String(error) };
    progress(`workerd verifications FAILED: ${workerd.error}`);
  }
  const fasterInNode: Ed25519Implementation = node.webcrypto >= node.noble ? "webcrypto" : "noble";
  const rateLimit = await measureRateLimiter(workDir, progress);
  let webhook: PluginsResults["webhook"];
  try {
    webhook = await measureWebhook(workDir, progress);
  } catch (error) {
    webhook = { error: error instanceof Error ? error.message : String(error) };
    progress(`webhook → handler FAILED: ${webhook.error}`);
  }
  return {
    bodyBytes: new TextEncoder().encode(input.body).length,
    node,
    workerd,
    // verifyEd25519Webhook's default (the hot path) is WebCrypto; the ratio says whether that is the faster one.
    hotPath: {
      implementation: "webcrypto",
      fasterInNode,
      nodeRatio: round(node.webcrypto / node.noble, 2),
      workerdRatio: "error" in workerd ? null : round(workerd.webcrypto / workerd.noble, 2),
    },
    rateLimit,
    webhook,
  };
}

export function formatPlugins(outcome: PluginsResults | { error: string }): string {
  if ("error" in outcome) return `P. Plugins: not measured (${outcome.error})`;
  const { node, workerd, hotPath, rateLimit, webhook } = outcome;
  const perS = (v: number) => `${Math.round(v).toLocaleString("en-US")}/s`;
  const ms = (v: number) => `${v.toFixed(2)} ms`;
  const lines = [
    "P. Plugins (webhook signatures, per-project rate limit, webhook → handler through workerd)",
    `  1. webhook verifications (same ${outcome.bodyBytes}-byte body and key; full check: headers, freshness, signature; median of ${ROUNDS} interleaved rounds):`,
    `                           Ed25519 WebCrypto   Ed25519 @noble/ed25519   Slack HMAC-SHA256`,
    `    Node ${process.versions.node.padEnd(19)} ${perS(node.webcrypto).padStart(17)}   ${perS(node.noble).padStart(22)}   ${perS(node.slack).padStart(17)}`,
  ];
  if ("error" in workerd) lines.push(`    workerd: not measured (${workerd.error})`);
  else {
    lines.push(
      `    workerd (wall)           ${perS(workerd.webcrypto).padStart(17)}   ${perS(workerd.noble).padStart(22)}   ${perS(workerd.slack).padStart(17)}`,
    );
    if (workerd.cpuPerSecond) {
      const c = workerd.cpuPerSecond;
      lines.push(
        `    workerd (per CPU-second) ${perS(c.webcrypto).padStart(17)}   ${perS(c.noble).padStart(22)}   ${perS(c.slack).padStart(17)}`,
      );
    }
    lines.push(
      "    (Node: one awaited check after another; Node runs each WebCrypto call as an async job on its thread pool, so each pays that hop)",
      `    (workerd: one request runs a batch of ${workerd.checks.webcrypto / ROUNDS} / ${workerd.checks.noble / ROUNDS} / ${workerd.checks.slack / ROUNDS} checks, timed from Node minus an empty request's time; its Date.now() does not move without I/O; CPU from /proc)`,
    );
  }
  const fasterWorkerd = "error" in workerd ? null : workerd.webcrypto >= workerd.noble ? "webcrypto" : "noble";
  lines.push(
    `    hot path (verifyEd25519Webhook default): ${hotPath.implementation} — WebCrypto/noble = ${hotPath.nodeRatio}× in Node` +
      (hotPath.workerdRatio === null ? "" : `, ${hotPath.workerdRatio}× in workerd`) +
      ` -> ${hotPath.fasterInNode === hotPath.implementation && (fasterWorkerd === null || fasterWorkerd === hotPath.implementation) ? "PASS the hot path uses the faster one" : "MISS the hot path is not the faster one"}`,
  );
  lines.push(
    `  2. RateLimiter actor (one project), N concurrent take("actions", 3, 60_000) from a bench worker, fresh actor per trial, ${rateLimit.levels[0]?.trials ?? 0} trials:`,
  );
  for (const level of rateLimit.levels) {
    lines.push(
      `    N=${String(level.concurrency).padEnd(5)} ${perS(level.decisionsPerSecond).padStart(9)} decisions (Node wall)` +
        (level.insideDecisionsPerSecond === null ? "" : `, ${perS(level.insideDecisionsPerSecond)} (worker clock)`) +
        `   allowed ${level.allowedPerTrial.join("/")} of ${level.concurrency}; same window again: ${level.allowedOnSecondBatch.join("/")}` +
        (level.retryAfterSeconds
          ? `; Retry-After ${level.retryAfterSeconds[0] === level.retryAfterSeconds[1] ? level.retryAfterSeconds[0] : level.retryAfterSeconds.join("–")} s`
          : ""),
    );
  }
  lines.push(
    `    -> ${rateLimit.exactlyThreePerWindow ? "PASS exactly 3 allowed per window at every concurrency" : "MISS the limit was not exactly 3 per window"}`,
  );
  if ("error" in webhook) lines.push(`  3. webhook → handler: not measured (${webhook.error})`);
  else {
    lines.push(
      `  3. webhook → handler, one Miniflare: workspace plugin worker (D1, LOCAL_SCRIPTS dispatch) + fake Slack + bench project (buildProject, workspace.onEvent("message")); ${webhook.events} events each way, one at a time; handler time = its call to a Node probe arriving:`,
      `    fake signs + posts to /webhook:   plugin's 200 median ${ms(webhook.viaFake.ackMedianMs)}  p95 ${ms(webhook.viaFake.ackP95Ms)}    handler ran median ${ms(webhook.viaFake.handlerMedianMs)}  p95 ${ms(webhook.viaFake.handlerP95Ms)}`,
      `    Node-signed POST to /webhook:     plugin's 200 median ${ms(webhook.direct.ackMedianMs)}  p95 ${ms(webhook.direct.ackP95Ms)}    handler ran median ${ms(webhook.direct.handlerMedianMs)}  p95 ${ms(webhook.direct.handlerP95Ms)}`,
      `    (path: HMAC check, team → project in D1, event dedupe write, ack; then waitUntil: internal-token dispatch → project's /__plugin/workspace → handler; handler runs seen: ${webhook.handlerRuns})`,
    );
  }
  return lines.join("\n");
}
