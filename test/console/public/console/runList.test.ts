import { describe, expect, it } from "vitest";
import { apiFilterOf, timeFilterOf } from "#src/console/public/console/runList.js";

describe("the run list's filters (kept in the address as typed)", () => {
  const now = Date.UTC(2026, 10, 25, 12, 0, 0);
  it.each([
    { text: "2h", at: now - 2 * 3_600_000 },
    { text: "15m", at: now - 15 * 60_000 },
    { text: "7d", at: now - 7 * 86_400_000 },
    { text: "1764000000000", at: 1764000000000 },
    { text: "2026-11-25T10:00Z", at: Date.UTC(2026, 10, 25, 10, 0, 0) },
    { text: "yesterday", at: null },
  ])("a time of $text", ({ text, at }) => {
    expect(timeFilterOf(text, now)).toBe(at);
  });

  it("turns the form's values into workflow.list's filter, leaving out empty fields", () => {
    const given = new URLSearchParams({ status: "failed", step: "charge", since: "2h", error: "", name: "" });
    expect(apiFilterOf(given, now)).toEqual({ status: "failed", step: "charge", since: now - 2 * 3_600_000 });
    expect(() => apiFilterOf(new URLSearchParams({ until: "soon" }), now)).toThrow(/until/);
  });
});
