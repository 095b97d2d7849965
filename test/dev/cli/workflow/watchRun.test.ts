import { describe, expect, it } from "vitest";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import type { StreamBatch } from "#src/engine/streams/liveRunStream.ts";
import type { StreamMessage } from "#src/engine/streams/runStream.ts";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { parseWatchInvocation, watchRun } from "#src/dev/cli/workflow/watchRun.ts";

const message = (offset: number, topic: string, data: unknown): StreamMessage =>
  ({ offset, topic, data, at: 0, step: "start", attempt: 1 }) as StreamMessage;

describe("parseWatchInvocation", () => {
  it.each([
    [["r1"], {}, { run: "r1", from: 0, topics: [] }],
    [["r1"], { from: "3" }, { run: "r1", from: 3, topics: [] }],
    [["r1"], { topic: "progress" }, { run: "r1", from: 0, topics: ["progress"] }],
    [["r1"], { topic: "progress,run", from: "0" }, { run: "r1", from: 0, topics: ["progress", "run"] }],
  ])("%j %j", (positionals, values, expected) => {
    expect(parseWatchInvocation(positionals, values)).toEqual(expected);
  });

  it.each([
    ["no run", [], {}, /Usage: platform workflow watch <run>/],
    ["two runs", ["a", "b"], {}, /Usage/],
    ["a negative --from", ["r"], { from: "-1" }, /--from must be a message offset/],
    ["a word --from", ["r"], { from: "two" }, /--from must be a message offset/],
    ["an empty --topic", ["r"], { topic: "," }, /--topic needs a topic name/],
  ])("refuses %s with exit code 2", (_case, positionals, values, text) => {
    let thrown: unknown;
    try {
      parseWatchInvocation(positionals, values);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).exitCode).toBe(2);
    expect((thrown as CliError).message).toMatch(text);
  });
});

describe("watchRun", () => {
  /** A source answering these batches in turn, recording the offsets and topics asked for. */
  function source(batches: StreamBatch[], view: Partial<WorkflowRunView>) {
    const asked: [number, readonly string[]][] = [];
    return {
      asked,
      readBatch: async (from: number, topics: readonly string[]) => {
        asked.push([from, topics]);
        const next = batches.shift();
        if (!next) throw new Error("read after the end");
        return next;
      },
      view: async () => ({ id: "run-1", ...view }) as WorkflowRunView,
    };
  }

  it.each([
    ["completed", {}, 0, "Run run-1 completed.\n"],
    ["failed", { error: "card declined" }, 1, "Run run-1 failed: card declined.\n"],
    ["cancelled", { error: "no longer needed" }, 1, "Run run-1 cancelled: no longer needed.\n"],
  ])(
    "prints each message as it arrives, then how the run %s, and answers its exit code",
    async (status, extra, code, last) => {
      const from = source(
        [
          { messages: [message(2, "progress", { pct: 10 })], ended: false },
          { messages: [], ended: false, retryAfterMS: 30_000 },
          { messages: [message(5, "progress", { pct: 90 }), message(6, "run", { type: "ended" })], ended: true },
        ],
        { status: status as WorkflowRunView["status"], ...extra },
      );
      const out: string[] = [];
      const slept: number[] = [];
      const exit = await watchRun(
        { run: "run-1", from: 2, topics: ["progress", "run"] },
        from,
        (t) => void out.push(t),
        async (ms) => void slept.push(ms),
      );
      expect(exit).toBe(code);
      expect(out).toEqual(['#2 progress {"pct":10}\n', '#5 progress {"pct":90}\n', '#6 run {"type":"ended"}\n', last]);
      // Each read goes on after the last message printed; an idle run's answer is waited out.
      expect(from.asked.map(([offset]) => offset)).toEqual([2, 3, 3]);
      expect(from.asked.every(([, topics]) => topics.join() === "progress,run")).toBe(true);
      expect(slept).toEqual([30_000]);
    },
  );
});
