import { describe, expect, it } from "vitest";
import {
  type Continuation,
  continuationOfReturn,
  decodeContinuation,
  encodeContinuation,
  MAX_WAIT_MS,
  readsInbox,
  startsAtOnce,
} from "#src/engine/execution/continuation.ts";
import type { WorkflowEventPayloads } from "#src/engine/execution/events.ts";
import { PlatformError } from "#src/core/errors.ts";

type StepCompleted = WorkflowEventPayloads["step_completed"];

const AT = 1_800_000_000_000;

describe("a step_completed's continuation: the one decoding of next_step, wake_at, waiting_for and timeout_at", () => {
  it.each<{
    fields: Omit<StepCompleted, "step" | "writes">;
    continuation: Continuation;
    atOnce: boolean;
    inbox: boolean;
  }>([
    { fields: {}, continuation: { kind: "done" }, atOnce: false, inbox: false },
    { fields: { next_step: "ship" }, continuation: { kind: "next_step", step: "ship" }, atOnce: true, inbox: false },
    {
      fields: { next_step: "nudge", wake_at: AT + 5 },
      continuation: { kind: "sleep", step: "nudge", until: AT + 5 },
      atOnce: false,
      inbox: false,
    },
    {
      fields: { next_step: "approved", waiting_for: "approval" },
      continuation: { kind: "wait_for_event", step: "approved", event: "approval" },
      atOnce: false,
      inbox: true,
    },
    {
      fields: { next_step: "approved", waiting_for: "approval", timeout_at: AT + 9 },
      continuation: { kind: "wait_for_event", step: "approved", event: "approval", until: AT + 9 },
      atOnce: false,
      inbox: true,
    },
    {
      fields: { next_step: "report", waiting_for_run: "r1", timeout_at: AT + 9 },
      continuation: { kind: "wait_for_event", step: "report", event: "__run_ended/r1", run: "r1", until: AT + 9 },
      atOnce: false,
      inbox: true,
    },
  ])("$fields ⇄ $continuation", ({ fields, continuation, atOnce, inbox }) => {
    const payload: StepCompleted = { step: "start", writes: {}, ...fields };
    expect(decodeContinuation(payload)).toEqual(continuation);
    // Written back exactly: no field is added, none is set to undefined.
    expect(encodeContinuation(continuation)).toStrictEqual(fields);
    expect(startsAtOnce(continuation)).toBe(atOnce);
    expect(readsInbox(continuation)).toBe(inbox);
  });
});

describe("continuationOfReturn: what a step's return asks for", () => {
  const where = 'Step "start" of workflow "w"';
  it.each<[Record<string, unknown>, Continuation]>([
    [{ step: "b" }, { kind: "next_step", step: "b" }],
    [
      { step: "b", sleepMS: 1500.4 },
      { kind: "sleep", step: "b", until: AT + 1500 },
    ],
    [
      { step: "b", until: AT + 60_000.6 },
      { kind: "sleep", step: "b", until: AT + 60_001 },
    ],
    [
      { step: "b", waitFor: "approval" },
      { kind: "wait_for_event", step: "b", event: "approval" },
    ],
    [
      { step: "b", waitFor: "approval", timeoutMS: 10 },
      { kind: "wait_for_event", step: "b", event: "approval", until: AT + 10 },
    ],
    [
      { step: "b", waitForRun: "r1" },
      { kind: "wait_for_event", step: "b", event: "__run_ended/r1", run: "r1" },
    ],
    [
      { step: "b", waitForRun: "r1", timeoutMS: 10 },
      { kind: "wait_for_event", step: "b", event: "__run_ended/r1", run: "r1", until: AT + 10 },
    ],
  ])("%j → %j", (returned, continuation) => {
    expect(continuationOfReturn({ step: "b", ...returned }, AT, where)).toEqual(continuation);
  });

  it.each([
    [
      { sleepMS: 1, waitFor: "x" },
      "returned more than one of sleepMS, until, waitFor, waitForRun and children; pick one",
    ],
    [
      { waitFor: "x", children: [{ workflow: "w" }] },
      "returned more than one of sleepMS, until, waitFor, waitForRun and children",
    ],
    [{ waitFor: "x", waitForRun: "r1" }, "returned more than one of sleepMS, until, waitFor, waitForRun and children"],
    [{ waitForRun: "" }, "waitForRun must be the id of a run of this project"],
    [
      { waitFor: "__run_ended/r1" },
      'starts with "__run_ended/", which is reserved for the end of a run waited for with waitForRun',
    ],
    [{ timeoutMS: 5 }, "returned timeoutMS without waitFor"],
    [{ sleepMS: -1 }, "sleepMS must be a number of milliseconds >= 0, got -1"],
    [{ sleepMS: MAX_WAIT_MS + 1 }, "sleepMS must be at most 31536000000 (a year)"],
    [{ until: "tomorrow" }, 'until must be a time in epoch milliseconds, got "tomorrow"'],
    [{ until: AT + MAX_WAIT_MS + 1 }, "until is more than a year away"],
    [{ waitFor: "" }, "waitFor must be an event name of 1-256 characters"],
  ])("refuses %j with invalid_input naming the field", (returned, message) => {
    let thrown: unknown;
    try {
      continuationOfReturn({ step: "b", ...returned }, AT, where);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(PlatformError);
    expect(thrown).toMatchObject({ code: "invalid_input" });
    expect((thrown as Error).message).toContain(`${where} `);
    expect((thrown as Error).message).toContain(message);
  });
});
