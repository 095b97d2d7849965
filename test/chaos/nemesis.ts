import { descendantsOf } from "#test/support/e2e/cliProcess.ts";
import { killTree } from "#test/support/e2e/workflowProjects.ts";
import { seededRandom } from "#test/support/seededRandom.ts";

/** One fault: after `afterMS` of uptime, SIGKILL the tree and restart it, or SIGSTOP it for `pauseMS` then SIGCONT. */
export type Fault = { kind: "kill"; afterMS: number } | { kind: "pause"; afterMS: number; pauseMS: number };

/** The nemesis schedule for a seed: `kills` SIGKILLs and about half as many pauses, in a seeded order. */
export function planNemesis(seed: number, kills: number): Fault[] {
  const random = seededRandom(seed ^ 0x5eed);
  const faults: Fault[] = [];
  let pauses = Math.ceil(kills / 2);
  let killsLeft = kills;
  while (killsLeft + pauses > 0) {
    const kill = pauses === 0 || (killsLeft > 0 && random.next() < killsLeft / (killsLeft + pauses));
    const afterMS = random.int(500, 4_000);
    if (kill) {
      faults.push({ kind: "kill", afterMS });
      killsLeft--;
    } else {
      faults.push({ kind: "pause", afterMS, pauseMS: random.int(300, 3_000) });
      pauses--;
    }
  }
  return faults;
}

export function describeFault(fault: Fault): string {
  return fault.kind === "kill"
    ? `+${fault.afterMS}ms SIGKILL+restart`
    : `+${fault.afterMS}ms SIGSTOP ${fault.pauseMS}ms`;
}

/** What the nemesis acts on: the running `platform dev`'s process id, and how to start it again. */
export interface NemesisTarget {
  pid(): number;
  restart(): Promise<void>;
}

function signalTree(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone already
    }
  }
}

/** Applies the schedule in order; `log` hears each fault as it happens. */
export async function runNemesis(faults: Fault[], target: NemesisTarget, log: (line: string) => void): Promise<void> {
  for (const [i, fault] of faults.entries()) {
    await new Promise((resolve) => setTimeout(resolve, fault.afterMS));
    log(`nemesis ${i + 1}/${faults.length}: ${describeFault(fault)}`);
    if (fault.kind === "kill") {
      await killTree(target.pid());
      await target.restart();
      continue;
    }
    const tree = [target.pid(), ...descendantsOf(target.pid())];
    signalTree(tree, "SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, fault.pauseMS));
    signalTree(tree, "SIGCONT");
  }
}
