import { describe, expect, it } from "vitest";
import { followStream, streamLine } from "#src/console/public/console/streamView.js";

const message = (offset: number, data: unknown, topic = "progress") => ({
  offset,
  topic,
  data,
  at: 0,
  step: "start",
  attempt: 1,
});

describe("a run page's stream", () => {
  it("shows a message as #offset topic data", () => {
    expect(streamLine(message(4, { pct: 50 }))).toBe('#4 progress {"pct":50}');
  });

  it.each([
    ["the run ends", true, [0, 2, 2], [[0, 1], [2]]],
    ["the page shows something else", false, [0, 2], [[0, 1]]],
  ])(
    "reads batch after batch from where it left off until %s, waiting as long as a resting run asks",
    async (_case, staysOpen, offsets, shown) => {
      const batches = [
        { messages: [message(0, "a"), message(1, "b")], ended: false },
        { messages: [], ended: false, retryAfterMS: 30_000 },
        { messages: [message(2, "c")], ended: true },
      ];
      const asked: number[] = [];
      const seen: number[][] = [];
      const slept: number[] = [];
      let open = true;
      await followStream({
        read: async (from) => {
          asked.push(from);
          const batch = batches.shift()!;
          if (!staysOpen && asked.length === 2) open = false;
          return batch;
        },
        show: (messages) => void seen.push(messages.map((m) => m.offset)),
        current: () => open,
        sleep: async (ms) => void slept.push(ms),
      });
      expect(asked).toEqual(offsets);
      expect(seen).toEqual(shown);
      expect(slept).toEqual(staysOpen ? [30_000] : []);
    },
  );
});
