import { describe, expect, it } from "vitest";
import { runControlsKey } from "#src/console/public/console/runControls.js";

describe("run controls", () => {
  it.each([
    { view: { status: "running" }, key: "running|" },
    { view: { status: "running", waitingFor: { name: "approval" } }, key: "running|approval" },
    { view: { status: "running", wakeAt: 5 }, key: "running|" },
    { view: { status: "cancelled" }, key: "cancelled|" },
    { view: { status: "queued", queued: { key: "acme", waitsFor: "its turn" } }, key: "queued|" },
  ])("redraws for $key (status and the awaited event), not on every refresh", ({ view, key }) => {
    expect(runControlsKey(view)).toBe(key);
  });

  it("redraws when a run is paused or resumed", () => {
    expect(runControlsKey({ status: "paused" })).toBe("paused|");
  });
});
