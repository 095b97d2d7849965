import { describe, expect, it } from "vitest";
import { driveMinuteCron, type MinuteClock } from "#src/dev/cli/dev/crons/minuteCronDriver.ts";

/** A clock whose time moves only when the test says, firing timers as it passes them. */
function manualClock(start: string): MinuteClock & { advanceTo(at: string): Promise<void>; pending(): number } {
  let now = Date.parse(start);
  let next = 1;
  const timers = new Map<number, { at: number; run: () => void }>();
  return {
    now: () => now,
    setTimeout: (run, delayMS) => {
      timers.set(next, { at: now + delayMS, run });
      return next++;
    },
    clearTimeout: (handle) => void timers.delete(handle as number),
    pending: () => timers.size,
    async advanceTo(at) {
      const target = Date.parse(at);
      for (;;) {
        const due = [...timers.entries()].filter(([, t]) => t.at <= target).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        now = due[1].at;
        due[1].run();
        // Let the awaited runScheduled settle and the next minute be scheduled.
        for (let i = 0; i < 5; i++) await Promise.resolve();
      }
      now = target;
    },
  };
}

describe("driveMinuteCron", () => {
  it.each([
    ["from mid-minute", "2026-11-28T10:00:30Z", "2026-11-28T10:03:10Z", ["10:01", "10:02", "10:03"]],
    ["from the minute's first millisecond", "2026-11-28T10:00:00Z", "2026-11-28T10:02:00Z", ["10:01", "10:02"]],
    ["before the first minute", "2026-11-28T10:00:30Z", "2026-11-28T10:00:59.999Z", []],
  ])("delivers each whole minute once %s", async (_, start, until, minutes) => {
    const clock = manualClock(start);
    const delivered: string[] = [];
    const driver = driveMinuteCron(
      async (at) => void delivered.push(at.toISOString().slice(11, 16)),
      (error) => {
        throw error;
      },
      clock,
    );
    await clock.advanceTo(until);
    driver.stop();
    expect(delivered).toEqual(minutes);
  });

  it("reports a failed minute and still delivers the next", async () => {
    const clock = manualClock("2026-11-28T10:00:30Z");
    const delivered: string[] = [];
    const errors: string[] = [];
    const driver = driveMinuteCron(
      async (at) => {
        delivered.push(at.toISOString());
        if (delivered.length === 1) throw new Error("scheduled() threw");
      },
      (error) => errors.push((error as Error).message),
      clock,
    );
    await clock.advanceTo("2026-11-28T10:02:00Z");
    driver.stop();
    expect(errors).toEqual(["scheduled() threw"]);
    expect(delivered).toEqual(["2026-11-28T10:01:00.000Z", "2026-11-28T10:02:00.000Z"]);
  });

  it("passes the minute it was set for when its timer fires late", async () => {
    const clock = manualClock("2026-11-28T10:00:30Z");
    const delivered: Date[] = [];
    const driver = driveMinuteCron(
      async (at) => void delivered.push(at),
      () => {},
      {
        ...clock,
        // Every timer fires 7 s late, as on a busy machine.
        setTimeout: (run, delayMS) => clock.setTimeout(run, delayMS + 7_000),
      },
    );
    await clock.advanceTo("2026-11-28T10:01:10Z");
    driver.stop();
    expect(delivered.map((d) => d.toISOString())).toEqual(["2026-11-28T10:01:00.000Z"]);
  });

  it("stops: no minute after stop(), no timer left", async () => {
    const clock = manualClock("2026-11-28T10:00:30Z");
    const delivered: Date[] = [];
    const driver = driveMinuteCron(
      async (at) => void delivered.push(at),
      () => {},
      clock,
    );
    await clock.advanceTo("2026-11-28T10:01:00Z");
    driver.stop();
    await clock.advanceTo("2026-11-28T10:05:00Z");
    expect(delivered).toHaveLength(1);
    expect(clock.pending()).toBe(0);
  });
});
