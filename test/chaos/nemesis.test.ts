import { describe, expect, it } from "vitest";
import { planClients } from "./chaosClients.ts";
import { describeFault, planNemesis } from "./nemesis.ts";

describe("planNemesis", () => {
  it.each([
    { kills: 0, pauses: 0 },
    { kills: 1, pauses: 1 },
    { kills: 20, pauses: 10 },
  ])("plans $kills kills and $pauses pauses", ({ kills, pauses }) => {
    const faults = planNemesis(7, kills);
    expect(faults.filter((fault) => fault.kind === "kill")).toHaveLength(kills);
    expect(faults.filter((fault) => fault.kind === "pause")).toHaveLength(pauses);
  });

  it("puts `pushes` pushes of builds 1, 2, … among the faults, leaving the kills and pauses as planned without them", () => {
    const faults = planNemesis(1129, 3, 3);
    expect(faults.filter((fault) => fault.kind === "push").map((fault) => fault.build)).toEqual([1, 2, 3]);
    expect(faults.filter((fault) => fault.kind !== "push")).toEqual(planNemesis(1129, 3));
    expect(planNemesis(1129, 3, 3)).toEqual(faults);
    expect(planNemesis(1130, 3, 3)).not.toEqual(faults);
  });

  it("plans the same schedule for a seed, so a failure replays, and another for another seed", () => {
    expect(planNemesis(42, 20)).toEqual(planNemesis(42, 20));
    expect(planNemesis(42, 20)).not.toEqual(planNemesis(43, 20));
  });

  it("prints each fault as the report shows it", () => {
    expect(describeFault({ kind: "kill", afterMS: 900 })).toBe("+900ms SIGKILL+restart");
    expect(describeFault({ kind: "pause", afterMS: 50, pauseMS: 1200 })).toBe("+50ms SIGSTOP 1200ms");
    expect(describeFault({ kind: "push", afterMS: 700, build: 2 })).toBe("+700ms push build 2");
  });
});

describe("planClients", () => {
  it("gives each client a bounded list that begins with a long run and a slow one, the same for a seed", () => {
    const plan = planClients(9, 3, 5);
    expect(plan).toHaveLength(3);
    for (const ops of plan) expect(ops.slice(0, 2)).toEqual(["long", "slow"]);
    expect(plan.every((ops) => ops.length === 5)).toBe(true);
    expect(planClients(9, 3, 5)).toEqual(plan);
  });
});
