import { descendantsOf } from "#test/support/e2e/cliProcess.ts";
import { killTree } from "#test/support/e2e/workflowProjects.ts";
import { seededRandom } from "#test/support/seededRandom.ts";

/**
 * One fault: after `afterMS` of uptime, SIGKILL the tree and restart it, SIGSTOP it for `pauseMS` then SIGCONT,
 * or push build `build` of the project (a compatible new version: same workflows and steps).
 */
export type Fault =
  | { kind: "kill"; afterMS: number }
  | { kind: "pause"; afterMS: number; pauseMS: number }
  | { kind: "push"; afterMS: number; build: number };

/**
 * The nemesis schedule for a seed: `kills` SIGKILLs and about half as many pauses, in a seeded order, then
 * `pushes` pushes (builds 1, 2, …) put among them at seeded places. The pushes draw from a stream of their
 * own, so a seed without pushes plans what it always planned.
 */
export function planNemesis(seed: number, kills: number, pushes = 0): Fault[] {
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
  const placing = seededRandom(seed ^ 0x9054);
  for (let i = 0; i < pushes; i++)
    faults.splice(placing.int(0, faults.length), 0, { kind: "push", afterMS: placing.int(500, 4_000), build: 0 });
  // Builds in the order they are pushed: each push is the newer version.
  let build = 0;
  return faults.map((fault) => (fault.kind === "push" ? { ...fault, build: ++build } : fault));
}

export function describeFault(fault: Fault): string {
  if (fault.kind === "kill") return `+${fault.afterMS}ms SIGKILL+restart`;
  if (fault.kind === "pause") return `+${fault.afterMS}ms SIGSTOP ${fault.pauseMS}ms`;
  return `+${fault.afterMS}ms push build ${fault.build}`;
}

/** What the nemesis acts on: the running platform's process id, how to start it again, how to push a build. */
export interface NemesisTarget {
  pid(): number;
  restart(): Promise<void>;
  /** Pushes build `build` of the project and resolves once it serves; only a backend that pushes has it. */
  push?(build: number): Promise<void>;
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
    if (fault.kind === "push") {
      if (!target.push) throw new Error("This backend has no push: plan no pushes for it");
      await target.push(fault.build);
      continue;
    }
    const tree = [target.pid(), ...descendantsOf(target.pid())];
    signalTree(tree, "SIGSTOP");
    await new Promise((resolve) => setTimeout(resolve, fault.pauseMS));
    signalTree(tree, "SIGCONT");
  }
}
