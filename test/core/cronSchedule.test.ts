import { describe, expect, it } from "vitest";
import {
  canonicalTimezone,
  cronIsDue,
  cronScheduleProblem,
  cronTickAt,
  minuteOf,
  nextCronTick,
} from "#src/core/cronSchedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (time: number | null) => (time === null ? null : new Date(time).toISOString());

/** Every tick of `cron` in `timezone` from `from` to `to` (inclusive), found minute by minute with cronIsDue. */
function dueMinutes(cron: string, timezone: string, from: string, to: string): string[] {
  const ticks: string[] = [];
  for (let minute = at(from); minute <= at(to); minute += 60_000)
    if (cronIsDue({ cron, timezone }, minute + 17_000)) ticks.push(new Date(minute).toISOString());
  return ticks;
}

describe("cronTickAt: the tick a delivery belongs to", () => {
  it.each([
    // The platform delivers a due minute: its tick is that minute, however late in it the call comes.
    { cron: "0 * * * *", tz: "UTC", delivered: "2026-11-22T11:00:00.000Z", tick: "2026-11-22T11:00:00.000Z" },
    { cron: "0 * * * *", tz: "UTC", delivered: "2026-11-22T11:00:59.999Z", tick: "2026-11-22T11:00:00.000Z" },
    { cron: "* * * * *", tz: "UTC", delivered: "2026-11-22T11:07:42.120Z", tick: "2026-11-22T11:07:00.000Z" },
    // A delivery in a minute that is no tick (a run by hand): the latest tick so far.
    { cron: "0 * * * *", tz: "UTC", delivered: "2026-11-22T11:37:10.000Z", tick: "2026-11-22T11:00:00.000Z" },
    { cron: "*/15 * * * *", tz: "UTC", delivered: "2026-11-22T11:14:59.000Z", tick: "2026-11-22T11:00:00.000Z" },
    { cron: "0 9 * * 1", tz: "UTC", delivered: "2026-11-25T12:00:00.000Z", tick: "2026-11-23T09:00:00.000Z" },
    // In a zone: 09:00 in Berlin is 08:00 UTC in winter, 07:00 UTC in summer.
    { cron: "0 9 * * *", tz: "Europe/Berlin", delivered: "2026-11-22T08:00:30.000Z", tick: "2026-11-22T08:00:00.000Z" },
    { cron: "0 9 * * *", tz: "Europe/Berlin", delivered: "2026-07-01T07:00:00.000Z", tick: "2026-07-01T07:00:00.000Z" },
    { cron: "0 9 * * *", tz: "Europe/Berlin", delivered: "2026-07-01T08:00:00.000Z", tick: "2026-07-01T07:00:00.000Z" },
    { cron: "30 0 * * *", tz: "Asia/Kolkata", delivered: "2026-11-22T19:00:00.000Z", tick: "2026-11-22T19:00:00.000Z" },
  ])("$cron ($tz) delivered at $delivered → $tick", ({ cron, tz, delivered, tick }) => {
    expect(iso(cronTickAt({ cron, timezone: tz }, at(delivered)))).toBe(tick);
  });

  it("names the same tick for every delivery within its minute, and the next tick only from the next one on", () => {
    const schedule = { cron: "* * * * *", timezone: "UTC" };
    const ticks = [0, 1, 30_000, 59_999, 60_000].map((ms) =>
      iso(cronTickAt(schedule, at("2026-11-22T11:07:00Z") + ms)),
    );
    expect(ticks).toEqual([
      "2026-11-22T11:07:00.000Z",
      "2026-11-22T11:07:00.000Z",
      "2026-11-22T11:07:00.000Z",
      "2026-11-22T11:07:00.000Z",
      "2026-11-22T11:08:00.000Z",
    ]);
  });
});

describe("daylight-saving time (as Vixie cron: fixed times fire once, intervals follow elapsed time)", () => {
  it.each([
    {
      name: "a fixed time in the spring-forward gap fires at the first minute after it (Berlin, 29 March 2026)",
      cron: "30 2 * * *",
      tz: "Europe/Berlin",
      from: "2026-03-28T00:00:00Z",
      to: "2026-03-30T03:00:00Z",
      ticks: ["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"],
    },
    {
      name: "a fixed time that occurs twice in the autumn fires once, on its first pass (Berlin, 25 October 2026)",
      cron: "30 2 * * *",
      tz: "Europe/Berlin",
      from: "2026-10-24T00:00:00Z",
      to: "2026-10-26T03:00:00Z",
      ticks: ["2026-10-24T00:30:00.000Z", "2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"],
    },
    {
      name: "an interval fires on both passes of the repeated hour",
      cron: "*/30 * * * *",
      tz: "Europe/Berlin",
      from: "2026-10-25T00:00:00Z",
      to: "2026-10-25T02:00:00Z",
      ticks: [
        "2026-10-25T00:00:00.000Z",
        "2026-10-25T00:30:00.000Z",
        "2026-10-25T01:00:00.000Z",
        "2026-10-25T01:30:00.000Z",
        "2026-10-25T02:00:00.000Z",
      ],
    },
    {
      name: "an interval confined to the missing hour skips that day",
      cron: "*/30 2 * * *",
      tz: "Europe/Berlin",
      from: "2026-03-29T00:00:00Z",
      to: "2026-03-29T03:00:00Z",
      ticks: [],
    },
    {
      name: "hourly in New York across the autumn change: one tick per elapsed hour",
      cron: "0 * * * *",
      tz: "America/New_York",
      from: "2026-11-01T04:00:00Z",
      to: "2026-11-01T07:00:00Z",
      ticks: [
        "2026-11-01T04:00:00.000Z",
        "2026-11-01T05:00:00.000Z",
        "2026-11-01T06:00:00.000Z",
        "2026-11-01T07:00:00.000Z",
      ],
    },
    {
      name: "01:00 in New York on the autumn change fires once, not on the repeated hour",
      cron: "0 1 * * *",
      tz: "America/New_York",
      from: "2026-11-01T04:00:00Z",
      to: "2026-11-01T08:00:00Z",
      ticks: ["2026-11-01T05:00:00.000Z"],
    },
  ])("$name", ({ cron, tz, from, to, ticks }) => {
    expect(dueMinutes(cron, tz, from, to)).toEqual(ticks);
    // The tick of each due minute is itself, and nextCronTick walks the same sequence.
    for (const tick of ticks) expect(iso(cronTickAt({ cron, timezone: tz }, at(tick) + 59_000))).toBe(tick);
    for (let i = 1; i < ticks.length; i++)
      expect(iso(nextCronTick({ cron, timezone: tz }, at(ticks[i - 1]!)))).toBe(ticks[i]);
  });
});

describe("nextCronTick", () => {
  it.each([
    { cron: "0 * * * *", tz: "UTC", after: "2026-11-22T11:00:00.000Z", next: "2026-11-22T12:00:00.000Z" },
    { cron: "0 * * * *", tz: "UTC", after: "2026-11-22T10:59:59.999Z", next: "2026-11-22T11:00:00.000Z" },
    { cron: "0 9 * * 1-5", tz: "Europe/Berlin", after: "2026-11-27T09:00:00.000Z", next: "2026-11-30T08:00:00.000Z" },
    { cron: "0 0 29 2 *", tz: "UTC", after: "2026-03-01T00:00:00.000Z", next: "2028-02-29T00:00:00.000Z" },
  ])("$cron ($tz) after $after is $next", ({ cron, tz, after, next }) => {
    expect(iso(nextCronTick({ cron, timezone: tz }, at(after)))).toBe(next);
  });
});

describe("cronScheduleProblem", () => {
  it.each([
    { cron: "* * * * *", problem: null },
    { cron: "0 9 * * 1-5", problem: null },
    { cron: "*/15 0-6 1,15 * *", problem: null },
    { cron: "0 0 L * *", problem: null },
    { cron: "* * * *", problem: /not a cron expression of five fields/ },
    { cron: "0 * * * * *", problem: /not a cron expression of five fields/ },
    { cron: "@hourly", problem: /not a cron expression of five fields/ },
    { cron: "", problem: /not a cron expression of five fields/ },
    { cron: "60 * * * *", problem: /not a valid cron expression: .*minute/ },
    { cron: "0 24 * * *", problem: /not a valid cron expression: .*hour/ },
    { cron: "every five of the minutes", problem: /not a valid cron expression/ },
    { cron: "0 0 31 2 *", problem: /never fires/ },
  ])("$cron → $problem", ({ cron, problem }) => {
    const found = cronScheduleProblem(cron);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });
});

describe("canonicalTimezone", () => {
  it.each([
    { given: "UTC", zone: "UTC" },
    { given: "utc", zone: "UTC" },
    { given: "Europe/Berlin", zone: "Europe/Berlin" },
    { given: "europe/berlin", zone: "Europe/Berlin" },
    { given: "America/New_York", zone: "America/New_York" },
  ])("$given → $zone", ({ given, zone }) => {
    expect(canonicalTimezone(given)).toBe(zone);
  });

  it.each(["Mars/Olympus_Mons", "", "Europe/Berlin; DROP TABLE"])("%j → null", (given) => {
    expect(canonicalTimezone(given)).toBeNull();
  });
});

it("minuteOf floors to the minute", () => {
  expect(iso(minuteOf(at("2026-11-22T11:07:59.999Z")))).toBe("2026-11-22T11:07:00.000Z");
});
