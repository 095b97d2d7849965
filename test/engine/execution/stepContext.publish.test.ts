import { describe, expect, it } from "vitest";
import { createScratchpad, createStepAttempt } from "#src/engine/execution/stepContext.ts";

function attemptPublishingTo(published: [string, string][] | null) {
  return createStepAttempt({
    scratchpad: createScratchpad(),
    step: "fetch",
    attempt: 2,
    runId: "r",
    workflowId: "w",
    ...(published ? { publish: (topic: string, json: string) => void published.push([topic, json]) } : {}),
  });
}

describe("ctx.publish", () => {
  it("hands the host the topic and the data as JSON, at once", () => {
    const published: [string, string][] = [];
    const { ctx } = attemptPublishingTo(published);
    ctx.publish("progress", { pct: 10 });
    ctx.publish("a.b_c-9", undefined);
    expect(published).toEqual([
      ["progress", '{"pct":10}'],
      ["a.b_c-9", "null"],
    ]);
  });

  it.each([
    ["a topic with a space", "a b", 1, /ctx.publish in step "fetch": the topic "a b"/],
    ["data that is not JSON", "t", new Date(0), /ctx.publish in step "fetch": the data/],
    [
      "data with a cycle",
      "t",
      (() => {
        const o: Record<string, unknown> = {};
        o.o = o;
        return o;
      })(),
      /cycle|circular/i,
    ],
    ["data of 64 KiB + 1 byte of JSON", "t", "x".repeat(64 * 1024 - 1), /65537 bytes of JSON/],
  ])("refuses %s with invalid_input and hands the host nothing", (_case, topic, data, message) => {
    const published: [string, string][] = [];
    const { ctx } = attemptPublishingTo(published);
    expect(() => ctx.publish(topic, data)).toThrow(message);
    expect(() => ctx.publish(topic, data)).toThrow(expect.objectContaining({ code: "invalid_input" }));
    expect(published).toEqual([]);
  });

  it("refuses after the attempt ended (a step that timed out and keeps running)", () => {
    const published: [string, string][] = [];
    const attempt = attemptPublishingTo(published);
    attempt.seal();
    expect(() => attempt.ctx.publish("late", 1)).toThrow(/came after attempt 2 ended/);
    expect(published).toEqual([]);
  });

  it("refuses on a host that keeps no streams", () => {
    expect(() => attemptPublishingTo(null).ctx.publish("t", 1)).toThrow(/this host keeps no run streams/);
  });
});
