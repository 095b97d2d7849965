/**
 * executeRun on an exclusive host: a synchronous stretch of steps is written in one append, and
 * what others append while a step waits is met, not lost.
 */
import { describe, expect, it, vi } from "vitest";
import type { WorkflowSteps } from "#src/engine/api/definition.ts";
import { appendReceivedEvent, cancelRun } from "#src/engine/control/runControl.ts";
import { gate, PROGRESS, PROGRESS_TEST_TIMEOUT_MS, shape } from "#test/support/workflow/index.ts";
import { RUN, setup } from "./executeRun.fixture.ts";

vi.setConfig({ testTimeout: PROGRESS_TEST_TIMEOUT_MS });

describe("executeRun on an exclusive host: a synchronous stretch is written in one append", () => {
  const chain: WorkflowSteps = {
    start: () => ({ step: "middle" }),
    middle: () => ({ step: "finish" }),
    finish: () => ({ done: true, result: "ok" }),
  };

  it("appends the events of steps that never wait in one batch, then tells onEvent of each in order", async () => {
    const { run, events, store } = setup(chain);
    const appends = vi.spyOn(store, "append");
    const seen: string[] = [];
    const result = await run({ exclusive: true, onEvent: (event) => seen.push(event.type) });
    expect(result).toEqual({ status: "terminal" });
    expect(appends).toHaveBeenCalledTimes(1);
    const expected = [
      "workflow_created",
      "step_started(start,1)",
      "step_completed(start->middle)",
      "step_started(middle,1)",
      "step_completed(middle->finish)",
      "step_started(finish,1)",
      "step_completed(finish)",
      "workflow_completed",
    ];
    expect(shape(events())).toEqual(expected);
    expect(seen).toEqual(
      events()
        .slice(1)
        .map((event) => event.type),
    );
    // The same log as a host that writes each append at once.
    const plain = setup(chain);
    await plain.run();
    expect(shape(plain.events())).toEqual(expected);
  });

  /** A run whose second step waits on a gate, run on an exclusive host until that step is in flight. */
  async function slowStepInFlight() {
    const hold = gate();
    const subject = setup({
      start: () => ({ step: "slow" }),
      slow: async () => {
        await hold.promise;
        return { done: true, result: 1 };
      },
    });
    const running = subject.run({ exclusive: true });
    // The claim is in the log before the step waits.
    await vi.waitFor(() => expect(shape(subject.events()).at(-1)).toBe("step_started(slow,1)"), PROGRESS);
    return { ...subject, hold, running };
  }

  it("writes the claim before a step waits, so the log shows the step in flight", async () => {
    const { hold, running, events } = await slowStepInFlight();
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(shape(events()).slice(-3)).toEqual(["step_started(slow,1)", "step_completed(slow)", "workflow_completed"]);
  });

  it.each([
    {
      appended: "a cancel: the step's result is dropped",
      append: (store: ReturnType<typeof setup>["store"], now: number) =>
        cancelRun(store, { runId: RUN, reason: "stop", now }),
      tail: ["step_started", "workflow_cancelled"],
    },
    {
      appended: "an event sent: it is kept, the step's completion follows it",
      append: (store: ReturnType<typeof setup>["store"], now: number) =>
        appendReceivedEvent(store, RUN, { name: "ping", payload: null }, now),
      tail: ["step_started", "event_received", "step_completed", "workflow_completed"],
    },
  ])("meets what others appended while a step waited, $appended", async ({ append, tail }) => {
    const { hold, running, events, store, clock } = await slowStepInFlight();
    append(store, clock.now());
    hold.open();
    expect(await running).toEqual({ status: "terminal" });
    expect(
      events()
        .map((event) => event.type)
        .slice(-tail.length),
    ).toEqual(tail);
  });
});
