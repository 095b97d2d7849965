import { describe, expect, it } from "vitest";
import { createActiveTime } from "#src/objects/activeTime.ts";

type Action = { at: number; begin: string; as: string } | { at: number; end: string };

// Each row: work beginning and ending on actors at given times, and the active ms summed over actors.
const CASES: { name: string; actions: Action[]; totalAt: number; totalMS: number }[] = [
  {
    name: "one request",
    actions: [
      { at: 10, begin: "a", as: "r1" },
      { at: 25, end: "r1" },
    ],
    totalAt: 100,
    totalMS: 15,
  },
  {
    name: "overlapping requests on one actor count once",
    actions: [
      { at: 10, begin: "a", as: "r1" },
      { at: 15, begin: "a", as: "r2" },
      { at: 20, end: "r1" },
      { at: 40, end: "r2" },
    ],
    totalAt: 100,
    totalMS: 30,
  },
  {
    name: "two actors active at once add up",
    actions: [
      { at: 0, begin: "a", as: "r1" },
      { at: 0, begin: "b", as: "r2" },
      { at: 10, end: "r1" },
      { at: 10, end: "r2" },
    ],
    totalAt: 100,
    totalMS: 20,
  },
  {
    name: "an idle gap between requests is not counted",
    actions: [
      { at: 0, begin: "a", as: "r1" },
      { at: 5, end: "r1" },
      { at: 50, begin: "a", as: "r2" },
      { at: 52, end: "r2" },
    ],
    totalAt: 100,
    totalMS: 7,
  },
  {
    name: "work still in flight counts up to the reading",
    actions: [{ at: 30, begin: "a", as: "r1" }],
    totalAt: 100,
    totalMS: 70,
  },
  {
    name: "ending the same work twice ends it once",
    actions: [
      { at: 0, begin: "a", as: "r1" },
      { at: 0, begin: "a", as: "r2" },
      { at: 10, end: "r1" },
      { at: 10, end: "r1" },
      { at: 60, end: "r2" },
    ],
    totalAt: 100,
    totalMS: 60,
  },
];

describe("createActiveTime", () => {
  it.each(CASES)("$name", ({ actions, totalAt, totalMS }) => {
    let now = 0;
    const active = createActiveTime(() => now);
    const ends = new Map<string, () => void>();
    for (const action of actions) {
      now = action.at;
      if ("begin" in action) ends.set(action.as, active.begin(action.begin));
      else ends.get(action.end)!();
    }
    now = totalAt;
    expect(active.totalMS()).toBe(totalMS);
  });
});
