/**
 * Which slots a start keeps and which it gives back (src/objects/budgetedStart.ts), against a
 * recording stand-in of the platform's slots: each row is what the platform held before, what
 * the start answered (or threw), and what was given back.
 */
import { describe, expect, it, vi } from "vitest";
import { PlatformError } from "#src/core/errors.ts";
import { budgetedStart, type StartedRunRef } from "#src/objects/budgetedStart.ts";
import type { LiveRunSlots } from "#src/objects/liveRunSlots.ts";

function slotsHolding(before: string[]) {
  const held = new Set(before);
  const released: string[][] = [];
  const slots: LiveRunSlots = {
    hold: async (runIds) => {
      const fresh = runIds.filter((id) => !held.has(id));
      for (const id of fresh) held.add(id);
      return fresh;
    },
    release: async (runIds) => {
      released.push([...runIds]);
      for (const id of runIds) held.delete(id);
    },
  };
  return { slots, held, released };
}

const run = (runId: string, created: boolean): StartedRunRef => ({ runId, created });

describe("budgetedStart", () => {
  it.each([
    { name: "a run it created keeps its slot", before: [], answers: [run("a", true)], released: [], held: ["a"] },
    {
      name: "an id whose run was there already, its slot held: kept (the run holds it)",
      before: ["a"],
      answers: [run("a", false)],
      released: [],
      held: ["a"],
    },
    {
      name: "an id whose run had ended (slot given back before): given back again",
      before: [],
      answers: [run("a", false)],
      released: [["a"]],
      held: [],
    },
    {
      name: "another run answered (its workflow id's active run, a debounced start): its own slot given back",
      before: ["other"],
      answers: [run("other", false)],
      ids: ["a"],
      released: [["a"]],
      held: ["other"],
    },
    {
      name: "a fan-out: only the slots of children it did not create and did not find held",
      before: ["b"],
      answers: [run("a", true), run("b", false), run("c", false), run("x", false)],
      ids: ["a", "b", "c", "d"],
      released: [["c", "d"]],
      held: ["a", "b"],
    },
  ])("$name", async ({ before, answers, ids, released, held }) => {
    const platform = slotsHolding(before);
    const runIds = ids ?? answers.map((answer) => answer.runId);
    expect(
      await budgetedStart(
        platform.slots,
        runIds,
        async () => answers,
        async () => true,
      ),
    ).toEqual(answers);
    expect(platform.released).toEqual(released);
    expect([...platform.held].sort()).toEqual(held);
  });

  it("a refused hold starts nothing and gives nothing back", async () => {
    const refusal = new PlatformError("rate_limited", "Account live-run budget of 5 runs reached: …");
    const slots: LiveRunSlots = { hold: vi.fn(async () => Promise.reject(refusal)), release: vi.fn() };
    const start = vi.fn(async () => [run("a", true)]);
    await expect(budgetedStart(slots, ["a"], start, async () => false)).rejects.toBe(refusal);
    expect(start).not.toHaveBeenCalled();
    expect(slots.release).not.toHaveBeenCalled();
  });

  it.each([
    { name: "no run was made: its slot is given back", exists: async () => false, released: [["a", "b"]] },
    { name: "the run may exist: its slot stays, for its end to give back", exists: async () => true, released: [] },
    {
      name: "whether it exists is unknown: the slot stays",
      exists: async () => Promise.reject(new Error("actor unreachable")),
      released: [],
    },
  ])("a start that throws: $name, and the error is the start's", async ({ exists, released }) => {
    const platform = slotsHolding(["held-before"]);
    const failure = new Error("the actor's call failed");
    await expect(
      budgetedStart(platform.slots, ["a", "b", "held-before"], () => Promise.reject(failure), exists),
    ).rejects.toBe(failure);
    expect(platform.released).toEqual(released);
    expect(platform.held.has("held-before")).toBe(true);
  });

  it("a give-back the platform refuses does not fail a start that made its runs", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const slots: LiveRunSlots = { hold: async (ids) => [...ids], release: () => Promise.reject(new Error("down")) };
    expect(
      await budgetedStart(
        slots,
        ["a"],
        async () => [run("a", false)],
        async () => true,
      ),
    ).toEqual([run("a", false)]);
    expect(errors).toHaveBeenCalledWith(
      "live-run budget: could not give back the slots of 1 run(s):",
      expect.objectContaining({ message: "down" }),
    );
    errors.mockRestore();
  });
});
