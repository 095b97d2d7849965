/**
 * Live output streams (beyond the spec), every backend: `ctx.publish` appends to the run's stream at
 * once, `workflow.subscribe` reads it in offset order (from an offset, by topic) and ends after the
 * run's last message; the platform's lifecycle messages come on topic `run`; the limits hold.
 */
import { describe, expect, it } from "vitest";
import { isPlatformError } from "#src/core/errors.ts";
import type { StreamMessage } from "#src/engine/streams/runStream.ts";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { type MakeWorkflowBackend, pollingGates, useBackendUnderTest, viewOf } from "./workflowConformance.fixture.ts";

async function collect(iterable: AsyncIterable<StreamMessage>): Promise<StreamMessage[]> {
  const messages: StreamMessage[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

/** A message as the tests compare it: what it says, not when. */
const said = (message: StreamMessage) => [message.offset, message.topic, message.data, message.step, message.attempt];

/** What a step answers when a publish throws: the error's code and message, so the run records them. */
function refusal(error: unknown) {
  return { code: isPlatformError(error) ? error.code : "?", message: error instanceof Error ? error.message : "" };
}

export function describeStreamConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, live output streams: ${name}`, () => {
    const gates = pollingGates();
    useBackendUnderTest(makeBackend, gates, () => {
      workflow("progress", {
        start: async (ctx) => {
          ctx.publish("progress", { pct: 0 });
          ctx.publish("log", "fetching");
          ctx.publish("progress", { pct: 50 });
          return { step: "finish" };
        },
        finish: async (ctx) => {
          ctx.publish("progress", { pct: 100 });
          return { done: true, result: "ok" };
        },
      });
      workflow("gated", {
        start: async (ctx) => {
          ctx.publish("progress", "first");
          await gates.wait(ctx.workflowId);
          ctx.publish("progress", "second");
          return { done: true, result: null };
        },
      });
      workflow(
        "flaky",
        {
          start: async (ctx) => {
            ctx.publish("try", ctx.attempt);
            if (ctx.attempt === 1) throw new Error("first attempt breaks");
            return { done: true, result: ctx.attempt };
          },
        },
        { maxAttempts: 2, backoff: { initialMS: 1, maxMS: 1, factor: 1 } },
      );
      workflow("publisher", {
        start: async (ctx) => {
          const { topic, bytes, count } = ctx.data as { topic?: unknown; bytes?: number; count?: number };
          try {
            for (let i = 0; i < (count ?? 1); i++)
              ctx.publish(topic as string, bytes === undefined ? i : "x".repeat(bytes));
          } catch (error) {
            return { done: true, result: refusal(error) };
          }
          return { done: true, result: null };
        },
      });
    });

    it("a run's messages come in offset order from 0, the step's own between the platform's lifecycle on topic run", async () => {
      const run = await workflow.start("progress", {});
      const messages = await collect(workflow.subscribe(run.id));
      expect(messages.map(said)).toEqual([
        [0, "run", { type: "step_started", step: "start" }, "start", 1],
        [1, "progress", { pct: 0 }, "start", 1],
        [2, "log", "fetching", "start", 1],
        [3, "progress", { pct: 50 }, "start", 1],
        [4, "run", { type: "step_completed", step: "start", next: "finish" }, "start", 0],
        [5, "run", { type: "step_started", step: "finish" }, "finish", 1],
        [6, "progress", { pct: 100 }, "finish", 1],
        [7, "run", { type: "step_completed", step: "finish" }, "finish", 0],
        [8, "run", { type: "ended", status: "completed" }, "", 0],
      ]);
      expect(messages.every((message) => typeof message.at === "number" && message.at > 0)).toBe(true);
      await expect(run.result()).resolves.toBe("ok");
    });

    it.each([
      ["from 0 (the default)", { from: 0 }, [0, 1, 2, 3, 4, 5, 6, 7, 8]],
      ["from 3", { from: 3 }, [3, 4, 5, 6, 7, 8]],
      ["from past the end", { from: 50 }, []],
      ["topics progress", { topics: ["progress"] }, [1, 3, 6]],
      ["topics progress and log from 2", { from: 2, topics: ["progress", "log"] }, [2, 3, 6]],
      ["topics run", { topics: ["run"] }, [0, 4, 5, 7, 8]],
    ])("subscribe %s of an ended run", async (_case, options, offsets) => {
      const run = await workflow.start("progress", {});
      await run.result();
      const messages = await collect(workflow.subscribe(run.id, options));
      expect(messages.map((message) => message.offset)).toEqual(offsets);
    });

    it("a message published mid-step reaches a subscriber while that step still runs; the iterable ends after the run ends", async () => {
      const run = await workflow.start("gated", {}, { id: "gated-1" });
      const seen: StreamMessage[] = [];
      let stillRunning: boolean | null = null;
      for await (const message of workflow.subscribe(run.id, { topics: ["progress"] })) {
        seen.push(message);
        if (message.data === "first") {
          const view = await viewOf(run.id);
          stillRunning = view.status === "running" && view.events[view.events.length - 1]?.type === "step_started";
          gates.open("gated-1");
        }
      }
      expect(stillRunning).toBe(true);
      expect(seen.map((message) => message.data)).toEqual(["first", "second"]);
      expect((await viewOf(run.id)).status).toBe("completed");
    });

    it("a message of an attempt that failed stays, marked with its attempt (at-least-once)", async () => {
      const run = await workflow.start("flaky", {});
      await expect(run.result()).resolves.toBe(2);
      const messages = await collect(workflow.subscribe(run.id));
      expect(messages.filter((m) => m.topic === "try").map((m) => [m.data, m.attempt])).toEqual([
        [1, 1],
        [2, 2],
      ]);
      expect(
        messages.find((m) => m.data !== null && (m.data as { type?: string }).type === "step_failed"),
      ).toMatchObject({
        topic: "run",
        attempt: 1,
        data: { type: "step_failed", step: "start", reason: "first attempt breaks", retryable: true },
      });
    });

    it.each([
      ["an empty topic", { topic: "" }, /topic "" is not 1-64 characters/],
      ["an upper-case topic", { topic: "Progress" }, /topic "Progress"/],
      ["a topic of 65 characters", { topic: "a".repeat(65) }, /is not 1-64 characters/],
      ["a topic with a slash", { topic: "a/b" }, /topic "a\/b"/],
      ["a topic that is no string", { topic: 7 }, /topic 7/],
      ["data over 64 KiB", { topic: "big", bytes: 64 * 1024 }, /at most 65536 \(64 KiB\)/],
      ["more than 10,000 messages", { topic: "many", count: 10_001 }, /holds 10000 messages, its limit/],
      ["more than 10 MiB", { topic: "heavy", bytes: 60_000, count: 200 }, /limit of 10485760 bytes \(10 MiB\)/],
    ])(
      "publishing %s is refused with invalid_input",
      async (_case, data, message) => {
        const run = await workflow.start("publisher", data);
        const result = (await run.result()) as { code: string; message: string };
        expect(result.code).toBe("invalid_input");
        expect(result.message).toMatch(message);
      },
      60_000,
    );

    it("the stream keeps 10,000 messages (the lifecycle's count too): the publish after them is refused, those before stay", async () => {
      const run = await workflow.start("publisher", { topic: "many", count: 10_001 });
      await run.result();
      const kept = await collect(workflow.subscribe(run.id, { topics: ["many"] }));
      expect(kept).toHaveLength(10_000 - 1);
      expect(kept[kept.length - 1]?.offset).toBe(9_999);
    }, 60_000);

    it.each([
      ["an unknown run", "no-such-run", undefined, "not_found"],
      ["a negative from", null, { from: -1 }, "invalid_input"],
      ["a fractional from", null, { from: 1.5 }, "invalid_input"],
      ["an empty topics list", null, { topics: [] }, "invalid_input"],
      ["a bad topic", null, { topics: ["BAD"] }, "invalid_input"],
    ])("subscribe to %s is refused", async (_case, runId, options, code) => {
      const run = await workflow.start("progress", {});
      await run.result();
      const read = async () => collect(workflow.subscribe(runId ?? run.id, options as { from?: number }));
      await expect(read()).rejects.toMatchObject({ code });
    });
  });
}
