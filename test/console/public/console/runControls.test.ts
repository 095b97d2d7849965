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
    { view: { status: "queued", queued: { key: "acme", waitsFor: "its turn" } }, key: "queued|" },
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
    {
      name: "the last data a debounced start gave it",
      events: [
        created,
        { seq: 2, type: "start_replaced", at: 1, payload: { writes: { data: { to: "bob" } } } },
        { seq: 3, type: "start_replaced", at: 2, payload: { writes: { data: { to: "cy" } } } },
        { seq: 4, type: "workflow_dequeued", at: 3, payload: {} },
      ],
      data: { to: "cy" },
    },
  ])("Run again starts with $name", ({ events, data }) => {
    expect(startDataOf({ events })).toEqual(data);
  });
});
