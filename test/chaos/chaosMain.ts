// `npm run chaos [-- --kills N --seed S --backend workerd|node|up --pushes M --port P]`: the chaos suite against
// `platform dev` (workerd, then `--node`, unless --backend names one), or with `--backend up` the project pushed to
// `platform up`, M compatible new builds pushed mid-run (not in the default list: it needs an address the
// project may fetch the ledger at, and takes longer). Exits 1 when an invariant broke; the output's last line
// per backend names the seed that replays it; exits 2 when the platform could not be driven.
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
    pushes: { type: "string", default: "3" },
    clients: { type: "string", default: "4" },
    ops: { type: "string", default: "10" },
    // workerd's port; Node's is the next one, up's the one after.
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
const BACKENDS: readonly ChaosBackend[] = ["workerd", "node", "up"];
if (values.backend !== undefined && !BACKENDS.includes(values.backend as ChaosBackend))
  throw new Error(`--backend is workerd, node or up, not ${JSON.stringify(values.backend)}`);
const backends: ChaosBackend[] = values.backend ? [values.backend as ChaosBackend] : ["workerd", "node"];
const basePort = count("port", values.port);
const PORTS: Record<ChaosBackend, number> = { workerd: basePort, node: basePort + 1, up: basePort + 2 };

const workDir = mkdtempSync(path.join(tmpdir(), "platform-chaos-"));
let failed = false;
try {
  for (const backend of backends) {
    const report = await runChaos({
      seed,
      kills: count("kills", values.kills),
      pushes: count("pushes", values.pushes),
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
