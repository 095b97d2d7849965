// `npm run chaos [-- --kills N --seed S --backend workerd|node --port P]`: the chaos suite against `platform dev`
// (workerd, then `--node`, unless --backend names one). Exits 1 when an invariant broke; the output's
// last line per backend names the seed that replays it; exits 2 when the platform could not be driven.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";
import { type ChaosBackend, runChaos } from "./chaosDriver.ts";

const { values } = parseArgs({
  options: {
    kills: { type: "string", default: "20" },
    seed: { type: "string" },
    backend: { type: "string" },
    clients: { type: "string", default: "4" },
    ops: { type: "string", default: "10" },
    // workerd's port; Node's is the next one.
    port: { type: "string", default: "8966" },
  },
});

function count(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`--${name} takes a whole number, not ${JSON.stringify(text)}`);
  return value;
}

const seed = values.seed === undefined ? Date.now() % 1_000_000 : count("seed", values.seed);
if (values.backend !== undefined && values.backend !== "workerd" && values.backend !== "node")
  throw new Error(`--backend is workerd or node, not ${JSON.stringify(values.backend)}`);
const backends: ChaosBackend[] = values.backend ? [values.backend] : ["workerd", "node"];
const basePort = count("port", values.port);
const PORTS: Record<ChaosBackend, number> = { workerd: basePort, node: basePort + 1 };

const workDir = mkdtempSync(path.join(tmpdir(), "platform-chaos-"));
let failed = false;
try {
  for (const backend of backends) {
    const report = await runChaos({
      seed,
      kills: count("kills", values.kills),
      backend,
      port: PORTS[backend],
      workDir,
      clients: count("clients", values.clients),
      opsPerClient: count("ops", values.ops),
      settleTimeoutMS: 300_000,
      log: (line) => console.error(line),
    });
    console.log(report.text);
    failed ||= !report.passed;
  }
} catch (error) {
  // The platform could not be driven (e.g. it did not restart): not a verdict; its project is kept to look at.
  console.error(error);
  console.error(`The chaos run stopped; its project is in ${workDir}`);
  process.exit(2);
}
removeWorkDir(workDir);
process.exit(failed ? 1 : 0);
