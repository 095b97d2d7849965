/**
 * Start-or-send, every backend: `workflow.send(workflowId, event, payload, { start })` delivers to
 * the active run of that id or starts one whose first event it is, and concurrent calls never start
 * two runs.
 */
import { describe, expect, it } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { rejection } from "#test/support/workflow/index.ts";
import {
  type MakeWorkflowBackend,
  pollingGates,
  useBackendUnderTest,
  viewOf,
  viewWhen,
} from "./workflowConformance.fixture.ts";

const ITEMS = 20;
const START = { start: { name: "gatherer", data: { want: ITEMS } } };

export function describeSendOrStartConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, start-or-send: ${name}`, () => {
    useBackendUnderTest(makeBackend, pollingGates(), () => {
      workflow("gatherer", {
        start: async () => ({ step: "gather", waitFor: "item" }),
        gather: async (ctx) => {
          const items = [...(ctx.scratchpad.items ?? []), ctx.event?.payload];
          ctx.write("items", items);
          return items.length < ctx.data.want ? { step: "gather", waitFor: "item" } : { done: true, result: items };
        },
      });
      workflow("queued-work", { start: async () => ({ done: true }) }, { concurrency: { limit: 1 } });
    });

    it(`${ITEMS} concurrent calls create exactly one run, which receives all ${ITEMS} events`, async () => {
      const answers = await Promise.all(
        Array.from({ length: ITEMS }, (_, n) => workflow.send("order-7", "item", { n }, START)),
      );
      const runIds = new Set(answers.map((answer) => answer.runId));
      expect(runIds.size).toBe(1);
      expect(answers.filter((answer) => answer.created)).toHaveLength(1);
      const [runId] = runIds;
      const view = await viewOf(runId!);
      expect(view.workflowId).toBe("order-7");
      expect(view.events[1]?.type).toBe("event_received");
      expect(view.events.filter((event) => event.type === "event_received")).toHaveLength(ITEMS);
      const finished = await viewWhenEnded(runId!);
      expect(finished.status).toBe("completed");
      const received = (finished.result as { n: number }[]).map((item) => item.n).sort((a, b) => a - b);
      expect(received).toEqual(Array.from({ length: ITEMS }, (_, n) => n));
    });

    it("delivers to the active run of the id, whichever workflow it runs, and answers created: false", async () => {
      const first = await workflow.send("order-8", "item", { n: 1 }, START);
      expect(first.created).toBe(true);
      const second = await workflow.send("order-8", "item", { n: 2 }, START);
      expect(second).toEqual({ runId: first.runId, created: false });
      const view = await viewOf(first.runId);
      expect(view.events.filter((event) => event.type === "event_received").map((event) => event.payload)).toEqual([
        { name: "item", payload: { n: 1 } },
        { name: "item", payload: { n: 2 } },
      ]);
    });

    it("starts a new run once the id's run has ended", async () => {
      const one = { start: { name: "gatherer", data: { want: 1 } } };
      const first = await workflow.send("order-9", "item", { n: 1 }, one);
      expect((await viewWhenEnded(first.runId)).status).toBe("completed");
      const again = await workflow.send("order-9", "item", { n: 2 }, one);
      expect(again.created).toBe(true);
      expect(again.runId).not.toBe(first.runId);
    });

    it.each([
      [
        "an unknown workflow",
        { start: { name: "gathrer" } },
        "unknown_workflow",
        /no workflow named "gathrer" is registered/,
      ],
      [
        "a workflow with flow control",
        { start: { name: "queued-work" } },
        "invalid_input",
        /workflow "queued-work" has flow control/,
      ],
      [
        "a misspelt option",
        { strat: { name: "gatherer" } },
        "invalid_input",
        /has no "strat" \(did you mean "start"\?\)/,
      ],
      [
        "a misspelt start key",
        { start: { name: "gatherer", dta: {} } },
        "invalid_input",
        /has no "dta" \(did you mean "data"\?\)/,
      ],
    ])("refuses %s and starts nothing", async (_, options, code, message) => {
      const error = await rejection(workflow.send("order-10", "item", {}, options as typeof START));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      expect((await workflow.list({})).runs).toEqual([]);
    });
  });
}

const viewWhenEnded = (runId: string) =>
  viewWhen(runId, (view) => view.status !== "running" && view.status !== "waiting");
