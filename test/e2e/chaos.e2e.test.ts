import { describe, expect, it } from "vitest";
import { devBackends, useWorkDir } from "#test/support/e2e/index.ts";
import { runChaos } from "#test/chaos/chaosDriver.ts";

// Ports of this file: 8964 (workerd), 8965 (Node). `npm run chaos` is the long run (8966, 8967, 8968).
const work = useWorkDir("platform-e2e-chaos-");

// The bounded chaos run of `npm test`: one SIGKILL and one SIGSTOP in the middle of composed work,
// then every invariant of test/chaos/chaosChecker.ts over the runs' logs and the ledger.
const SEED = 20261129;

describe.each(devBackends(8964))("the chaos suite, bounded, against %s", (_name, flags, port) => {
  it("keeps every invariant through a SIGKILL and a SIGSTOP, and says so with counts", async () => {
    const lines: string[] = [];
    const report = await runChaos({
      seed: SEED,
      kills: 1,
      pushes: 0,
      backend: flags.includes("--node") ? "node" : "workerd",
      port,
      workDir: work,
      clients: 2,
      opsPerClient: 3,
      settleTimeoutMS: 150_000,
      log: (line) => lines.push(line),
    });
    expect(report.text, report.text).toMatch(new RegExp(`PASSED seed=${SEED}$`));
    expect(report.faults.map((fault) => fault.kind).sort()).toEqual(["kill", "pause"]);
    expect(lines).toContainEqual(expect.stringMatching(/^nemesis 2\/2: /));
    // Work was really done and checked: runs, commits and ledger attempts were counted.
    expect(report.history.runs.length).toBeGreaterThan(2);
    expect(report.text).toMatch(/^\d+ runs, 0 stuck$/m);
    expect(report.text).toMatch(/^[1-9]\d* commits, 0 duplicate commits$/m);
    expect(report.history.ledger.length).toBeGreaterThan(0);
  }, 300_000);
});
