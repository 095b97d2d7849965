/**
 * How a step fails under executeRun: retries and their backoff, exhausted attempts, timeouts,
 * dropped writes, what a step returns that cannot be stored (final at once), and the shape of the
 * error a step_failed keeps (beyond the spec).
 */
import { describe, expect, it } from "vitest";
import { brandError, PlatformError } from "#src/core/errors.ts";
import type { WorkflowSteps } from "#src/engine/api/definition.ts";
import { MAX_EVENT_PAYLOAD_BYTES } from "#src/engine/api/json.ts";
import { STEP_ERROR_LIMITS } from "#src/engine/execution/stepFailure.ts";
import { EXHAUSTED_AFTER_TWO_LOG, FAILED_AT_ONCE_LOG, RETRIED_ONCE_LOG, shape } from "#test/support/workflow/index.ts";
import { setup } from "./executeRun.fixture.ts";

describe("executeRun: faults", () => {
  it("plain error on attempt 1, success on attempt 2", async () => {
    const { run, events, clock } = setup({
      start: async (ctx) => {
        if (ctx.attempt === 1) throw new Error("flaky");
        return { done: true, result: ctx.attempt };
      },
    });
    const first = await run();
    expect(first.status).toBe("waiting");
    // Too early: still waiting, nothing written.
    clock.advance(999);
    expect(await run()).toEqual(first);
    expect(events()).toHaveLength(3);
    clock.advance(1);
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(RETRIED_ONCE_LOG);
    expect(events().at(-1)?.payload).toEqual({ result: 2 });
  });

  it("exhausted attempts → the last step_failed is final and workflow_failed says attempts_exhausted", async () => {
    const { run, events, clock } = setup(
      {
        start: async (ctx) => {
          throw new Error(`down ${ctx.attempt}`);
        },
      },
      { maxAttempts: 2 },
    );
    await run();
    clock.advance(60_000);
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(EXHAUSTED_AFTER_TWO_LOG);
    expect(events().at(-1)?.payload).toEqual({ reason: "down 2", cause: "attempts_exhausted" });
  });

  it("timeout → step_failed with reason timeout; writes of the timed-out attempt are dropped and later writes refused", async () => {
    let lateWrite: (() => void) | undefined;
    const { run, events } = setup(
      {
        start: (ctx) => {
          ctx.write("partial", true);
          lateWrite = () => ctx.write("late", 1);
          return new Promise(() => {}); // never settles
        },
      },
      { stepTimeoutMS: 20, maxAttempts: 1 },
    );
    expect(await run()).toEqual({ status: "terminal" });
    expect(shape(events())).toEqual(FAILED_AT_ONCE_LOG);
    expect(events()[2]?.payload).toEqual({ step: "start", attempt: 1, reason: "timeout", retryable: false });
    expect(events()[3]?.payload).toEqual({ reason: "timeout", cause: "attempts_exhausted" });
    expect(() => lateWrite?.()).toThrow(/after attempt 1 of step "start" ended/);
  });

  it("scratchpad writes are dropped when the attempt fails", async () => {
    const seen: unknown[] = [];
    const { run, events, clock } = setup({
      start: async (ctx) => {
        seen.push(ctx.scratchpad.x);
        if (ctx.attempt === 1) {
          ctx.write("x", "from failed attempt");
          throw new Error("flaky");
        }
        ctx.write("y", "kept");
        return { done: true, result: null };
      },
    });
    await run();
    clock.advance(60_000);
    await run();
    expect(seen).toEqual([undefined, undefined]);
    expect(events()[2]?.payload).not.toHaveProperty("writes");
    expect(events()[4]?.payload).toEqual({ step: "start", writes: { y: "kept" } });
  });

  it("the scratchpad is read-only inside a step", async () => {
    const { run, last } = setup(
      {
        start: async (ctx) => {
          (ctx.scratchpad as Record<string, unknown>).x = 1;
          return { done: true };
        },
      },
      { maxAttempts: 1 },
    );
    await run();
    expect(last().payload).toMatchObject({ reason: expect.stringMatching(/read-only/) });
  });

  it("a thrown non-Error still gives a readable reason", async () => {
    const { run, events } = setup({ start: () => Promise.reject({ code: 42 }) }, { maxAttempts: 1 });
    await run();
    expect(events()[2]?.payload).toMatchObject({ reason: 'Non-Error thrown: {"code":42}' });
  });
});

describe("executeRun: what a step returns must be storable (failures are final, retrying would repeat them)", () => {
  const cases: [string, WorkflowSteps, RegExp][] = [
    [
      "a result that is not JSON",
      { start: async () => ({ done: true, result: { when: new Date() } }) },
      /result of workflow "w" at when is a Date/,
    ],
    [
      "a result over 1 MiB",
      { start: async () => ({ done: true, result: "x".repeat(MAX_EVENT_PAYLOAD_BYTES) }) },
      /1 MiB/,
    ],
    [
      "writes over 1 MiB",
      {
        start: async (ctx) => {
          ctx.write("a", "x".repeat(MAX_EVENT_PAYLOAD_BYTES / 2));
          ctx.write("b", "x".repeat(MAX_EVENT_PAYLOAD_BYTES / 2));
          return { step: "start" };
        },
      },
      /writes of step "start": \d+ bytes of JSON, but .*\(1 MiB\)/,
    ],
    [
      "an unknown next step",
      { start: async () => ({ step: "nowhere" }) },
      /continues with step "nowhere", which workflow "w" does not define/,
    ],
    [
      "neither { step } nor { done: true }",
      { start: async () => undefined as never },
      /returned undefined; return \{ step/,
    ],
    [
      'ctx.write("data")',
      {
        start: async (ctx) => {
          ctx.write("data", 1);
          return { done: true };
        },
      },
      /"data" holds the start data/,
    ],
    [
      "ctx.write of a function",
      {
        start: async (ctx) => {
          ctx.write("f", () => 1);
          return { done: true };
        },
      },
      /ctx.write\("f"\) in step "start" is a function/,
    ],
  ];
  for (const [what, steps, reason] of cases) {
    it(what, async () => {
      const { run, events } = setup(steps, { maxAttempts: 3 });
      expect(await run()).toEqual({ status: "terminal" });
      expect(shape(events())).toEqual(FAILED_AT_ONCE_LOG);
      expect(events()[2]?.payload).toMatchObject({ reason: expect.stringMatching(reason) });
      expect(events()[3]?.payload).toMatchObject({ cause: "non_retryable" });
    });
  }
});

describe("executeRun: a failed step keeps its error's shape (step_failed.error, beyond the spec)", () => {
  const deep = new Error("charge failed", {
    cause: new TypeError("fetch failed", { cause: Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }) }),
  });
  const hostile = new Error("hostile");
  Object.defineProperty(hostile, "stack", {
    get() {
      throw new Error("no stack for you");
    },
  });
  const chain = (depth: number): Error =>
    depth === 0 ? new Error("root") : new Error(`level ${depth}`, { cause: chain(depth - 1) });
  const messages = (error: { message: string; cause?: unknown } | undefined): string[] =>
    error ? [error.message, ...messages(error.cause as typeof error | undefined)] : [];

  it.each([
    {
      name: "an error with causes: each with its name, message, code and raw stack",
      thrown: deep,
      error: {
        name: "Error",
        message: "charge failed",
        stack: expect.stringMatching(/^Error: charge failed\n\s+at /),
        cause: {
          name: "TypeError",
          message: "fetch failed",
          stack: expect.stringMatching(/^TypeError: fetch failed\n/),
          cause: {
            name: "Error",
            message: "socket hang up",
            code: "ECONNRESET",
            stack: expect.stringMatching(/^Error: socket hang up\n/),
          },
        },
      },
    },
    {
      name: "a PlatformError: its code",
      thrown: new PlatformError("upstream_error", "the provider answered 500"),
      error: expect.objectContaining({
        name: "PlatformError",
        code: "upstream_error",
        message: "the provider answered 500",
      }),
    },
    {
      name: "a thrown string: described, without a stack",
      thrown: "out of stock",
      error: { name: "Non-Error string", message: "out of stock" },
    },
    {
      name: "an error whose stack getter throws: the rest is kept",
      thrown: hostile,
      error: { name: "Error", message: "hostile" },
    },
  ])("$name", async ({ thrown, error }) => {
    const { run, events } = setup({
      start: async () => {
        throw thrown;
      },
    });
    await run();
    expect((events()[2]!.payload as { error?: unknown }).error).toEqual(error);
  });

  it("bounds it: name 200, message 4,000 (as reason), stack 16 KiB, 3 causes; cut texts end with …", async () => {
    const huge = new Error("m".repeat(10_000), { cause: chain(6) });
    huge.name = "N".repeat(500);
    huge.stack = `S${"s".repeat(40_000)}`;
    const { run, events } = setup({
      start: async () => {
        throw huge;
      },
    });
    await run();
    const payload = events()[2]!.payload as { reason: string; error: { name: string; message: string; stack: string } };
    expect(STEP_ERROR_LIMITS).toEqual({ name: 200, message: 4000, stack: 16_384, causes: 3 });
    expect(payload.reason).toHaveLength(4000);
    expect(payload.error.name).toHaveLength(200);
    expect(payload.error.name.endsWith("…")).toBe(true);
    expect(payload.error.message).toHaveLength(4000);
    expect(payload.error.stack).toHaveLength(16_384);
    expect(payload.error.stack.startsWith("Ss")).toBe(true);
    expect(messages(payload.error)).toEqual([payload.error.message, "level 6", "level 5", "level 4"]);
  });

  it("records the engine's error for what a step returned, and no error where nothing was thrown (a timeout)", async () => {
    const { run, events } = setup({ start: async () => ({ step: "nowhere" }) });
    await run();
    expect((events()[2]!.payload as { error?: unknown }).error).toMatchObject({
      name: "PlatformError",
      code: "invalid_input",
      message: expect.stringContaining('continues with step "nowhere"'),
    });
    const slow = setup({ start: () => new Promise(() => {}) }, { stepTimeoutMS: 1, maxAttempts: 1 });
    await slow.run();
    expect(shape(slow.events())).toContain("step_failed(start,1,final)");
    expect(slow.events()[2]?.payload).not.toHaveProperty("error");
  });

  it("knows NonRetryableError by its brand, from any copy of the runtime, not by its name", async () => {
    // An error of another copy of the class carries the same brand; one that only borrows the name does not.
    const otherCopy = new Error("card declined");
    otherCopy.name = "NonRetryableError";
    brandError(otherCopy, "NonRetryableError");
    const lookalike = new Error("card declined");
    lookalike.name = "NonRetryableError";
    for (const [thrown, final] of [
      [otherCopy, true],
      [lookalike, false],
    ] as const) {
      const { run, events } = setup({
        start: async () => {
          throw thrown;
        },
      });
      await run();
      expect(shape(events())[2]).toBe(final ? "step_failed(start,1,final)" : "step_failed(start,1,retryable)");
    }
  });
});
