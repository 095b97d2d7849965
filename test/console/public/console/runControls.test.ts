import { describe, expect, it } from "vitest";
import { runControlsKey, startDataOf } from "#src/console/public/console/runControls.js";

const created = {
  seq: 1,
  type: "workflow_created",
  at: 0,
  payload: { workflowName: "remind", writes: { data: { to: "ada" } } },
};

describe("run controls", () => {
  it.each([
    { view: { status: "running" }, key: "running|" },
    { view: { status: "running", waitingFor: { name: "approval" } }, key: "running|approval" },
    { view: { status: "running", wakeAt: 5 }, key: "running|" },
    { view: { status: "cancelled" }, key: "cancelled|" },
  ])("redraws for $key (status and the awaited event), not on every refresh", ({ view, key }) => {
    expect(runControlsKey(view)).toBe(key);
  });

  it.each([
    { name: "the start data", events: [created], data: { to: "ada" } },
    {
      name: "null when it started without data",
      events: [{ ...created, payload: { workflowName: "remind", writes: {} } }],
      data: null,
    },
  ])("Run again starts with $name", ({ events, data }) => {
    expect(startDataOf({ events })).toEqual(data);
  });
});
