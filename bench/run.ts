// `npm run bench`: the workflow engine benchmark. Runs, in one process and
// one go, (A) our WorkflowRun actors in workerd through Miniflare, (C)
// Cloudflare Workflows' own local engine on the same workloads, (H) workloads 2
// and 3 head to head (the two engines interleaved in pairs), and (B) the Node
// backend (and its workload 2 paired with the Durable Object backend's);
// prints a readable report and writes the same figures to
// bench/results/latest.json. Needs Node >= 22.12 with type stripping (the
// npm script runs the repository's Node 22).
import * as esbuild from "esbuild";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { computeRatios, computeTargets, formatReport, type BenchResults, type Outcome } from "./lib/report.ts";
import { benchBreakdown, formatBreakdown } from "./sections/breakdown.ts";
import { benchBackendPairs } from "./sections/backendHeadToHead.ts";
import { benchW2HeadToHead } from "./sections/headToHead.ts";
import { benchW3HeadToHead } from "./sections/headToHeadW3.ts";
import { benchNodeBackend } from "./sections/nodeBackend.ts";
import { benchCloudflareWorkflows } from "./sections/workerdCloudflare.ts";
import { benchOursInWorkerd } from "./sections/workerdOurs.ts";
import { benchSignin, formatSignin } from "./sections/signin.ts";
import { benchPlugins, formatPlugins } from "./sections/plugins.ts";
import { benchScale, formatScale } from "./sections/scale.ts";
import { benchSearch, formatSearch } from "./sections/search.ts";
import { benchQueuedStarts, formatQueuedStarts } from "./sections/queuedStarts.ts";
import { benchFanOut, formatFanOut } from "./sections/fanOut.ts";
import { benchMeter, formatMeter } from "./sections/meter.ts";
import { benchStream, formatStream } from "./sections/stream.ts";

const REPO = path.resolve(import.meta.dirname, "..");
const RESULTS_FILE = path.join(import.meta.dirname, "results", "latest.json");

const versionOf = (pkg: string) => {
  try {
    return (
      JSON.parse(readFileSync(path.join(REPO, "node_modules", pkg, "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    return "?";
  }
};

const tmpDir = mkdtempSync(path.join(os.tmpdir(), "platform-bench-"));
// Miniflare keeps its own scratch directory under os.tmpdir(); point that (and workerd's) into ours so one rm cleans all.
process.env.TMPDIR = path.join(tmpDir, "tmp");
mkdirSync(process.env.TMPDIR, { recursive: true });
const cleanup = () => rmSync(tmpDir, { recursive: true, force: true });
process.on("exit", cleanup);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

const progress = (section: string) => (line: string) => process.stderr.write(`[bench] ${section}: ${line}\n`);
const sectionSeconds: Record<string, number> = {};

async function section<T>(name: string, fn: () => Promise<T>, tried?: string[]): Promise<Outcome<T>> {
  const began = performance.now();
  progress(name)("starting");
  try {
    return await fn();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    progress(name)(`FAILED: ${message}`);
    return tried ? { error: message, tried } : { error: message };
  } finally {
    sectionSeconds[name] = (performance.now() - began) / 1000;
  }
}

const environment: BenchResults["environment"] = {
  date: new Date().toISOString(),
  cpu: os.cpus()[0]?.model ?? "unknown CPU",
  cores: os.cpus().length,
  node: process.versions.node,
  workerd: versionOf("workerd"),
  miniflare: versionOf("miniflare"),
  loadAverageAtStart: os.loadavg(),
};

// BENCH_SECTIONS=A,C (for example) runs only some sections; the default is all of them
// (H: workloads 2 and 3 head to head, ours and Cloudflare's interleaved; D: where a run's cost goes; S: sign-in;
// P: plugins; L: scale; Q: queued starts; R: run search at 1,000 and 100,000 runs; F: fan-out to child runs;
// M: the meter, rows written and alarms per step on Cloudflare's prices; T: run streams, publish → subscriber).
const only = new Set(
  (process.env.BENCH_SECTIONS ?? "A,B,C,H,D,S,P,L,Q,R,F,M,T").split(",").map((s) => s.trim().toUpperCase()),
);
const skipped = { error: "skipped (BENCH_SECTIONS)" };

let exitCode = 0;
try {
  const ours = only.has("A")
    ? await section("A ours/workerd", () => benchOursInWorkerd(path.join(tmpDir, "ours"), progress("A ours/workerd")))
    : skipped;
  const cloudflare = only.has("C")
    ? await section(
        "C cloudflare",
        () => benchCloudflareWorkflows(path.join(tmpDir, "cloudflare"), progress("C cloudflare")),
        [
          "Miniflare 5 (convertV4MiniflareOptions) with the v4 option workflows: { BENCH: { name, className } } on a worker exporting a WorkflowEntrypoint class",
        ],
      )
    : skipped;
  // H starts its own hosts for both engines (it also runs alone: BENCH_SECTIONS=H); the w2 and w3 targets use its paired medians.
  const headToHead = only.has("H")
    ? await section("H head-to-head w2", () =>
        benchW2HeadToHead(path.join(tmpDir, "h2h"), progress("H head-to-head w2")),
      )
    : skipped;
  const headToHeadW3 = only.has("H")
    ? await section("H head-to-head w3", () =>
        benchW3HeadToHead(path.join(tmpDir, "h2h"), progress("H head-to-head w3")),
      )
    : skipped;
  const breakdown = only.has("D")
    ? await section("D breakdown", () => benchBreakdown(path.join(tmpDir, "breakdown"), progress("D breakdown")))
    : skipped;
  const node = only.has("B")
    ? await section("B ours/node", () => benchNodeBackend(path.join(tmpDir, "node"), progress("B ours/node")))
    : skipped;
  // B's pairs: the Durable Object and Node backends on workload 2, interleaved (the backends target uses their median).
  const backendPairs = only.has("B")
    ? await section("B backends paired", () =>
        benchBackendPairs(path.join(tmpDir, "backend-pairs"), progress("B backends paired")),
      )
    : skipped;
  const signin = only.has("S")
    ? await section("S sign-in", () => benchSignin(path.join(tmpDir, "signin"), progress("S sign-in")))
    : skipped;
  const plugins = only.has("P")
    ? await section("P plugins", () => benchPlugins(path.join(tmpDir, "plugins"), progress("P plugins")))
    : skipped;
  const scale = only.has("L")
    ? await section("L scale", () => benchScale(path.join(tmpDir, "scale"), progress("L scale")))
    : skipped;
  const queuedStarts = only.has("Q")
    ? await section("Q queued starts", () =>
        benchQueuedStarts(path.join(tmpDir, "queued"), progress("Q queued starts")),
      )
    : skipped;
  const fanOut = only.has("F")
    ? await section("F fan-out", () => benchFanOut(path.join(tmpDir, "fan-out"), progress("F fan-out")))
    : skipped;
  const search = only.has("R")
    ? await section("R search", async () => {
        mkdirSync(path.join(tmpDir, "search"), { recursive: true });
        return benchSearch(path.join(tmpDir, "search"), progress("R search"));
      })
    : skipped;
  const meter = only.has("M")
    ? await section("M meter", () => benchMeter(path.join(tmpDir, "meter"), progress("M meter")))
    : skipped;
  const stream = only.has("T")
    ? await section("T streams", () => benchStream(path.join(tmpDir, "stream"), progress("T streams")))
    : skipped;
  environment.loadAverageAtEnd = os.loadavg();

  const ratios = computeRatios(ours, cloudflare, node);
  const results: BenchResults = {
    environment,
    sectionSeconds,
    ours,
    cloudflare,
    headToHead,
    headToHeadW3,
    node,
    backendPairs,
    breakdown,
    ratios,
    targets: computeTargets({ ours, node, headToHead, headToHeadW3, backendPairs, ratios }),
  };
  process.stdout.write(formatReport(results) + "\n");
  process.stdout.write("\n" + formatBreakdown(breakdown) + "\n");
  process.stdout.write("\n" + formatSignin(signin) + "\n");
  process.stdout.write("\n" + formatPlugins(plugins) + "\n");
  process.stdout.write("\n" + formatScale(scale) + "\n");
  process.stdout.write("\n" + formatQueuedStarts(queuedStarts) + "\n");
  process.stdout.write("\n" + formatSearch(search) + "\n");
  process.stdout.write("\n" + formatFanOut(fanOut) + "\n");
  process.stdout.write("\n" + formatMeter(meter) + "\n");
  process.stdout.write("\n" + formatStream(stream) + "\n");
  mkdirSync(path.dirname(RESULTS_FILE), { recursive: true });
  writeFileSync(
    RESULTS_FILE,
    JSON.stringify(
      {
        ...results,
        signin,
        plugins,
        scale,
        queuedStarts,
        search,
        fanOut,
        meter: "error" in meter ? meter : meter.points,
        stream,
      },
      null,
      2,
    ) + "\n",
  );
  process.stdout.write(`\nFigures written to ${path.relative(process.cwd(), RESULTS_FILE)}\n`);
  // Section A failing fails the bench; skipping it (BENCH_SECTIONS) does not.
  if (only.has("A") && "error" in ours) exitCode = 1;
} finally {
  // buildProject and the Cloudflare bundle use esbuild's service process; it would outlive us otherwise.
  await esbuild.stop();
  cleanup();
}
process.exit(exitCode);
