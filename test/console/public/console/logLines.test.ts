import { describe, expect, it } from "vitest";
import {
  createStepFollower,
  formatLogEntry,
  formatStepLines,
  type LogEntry,
  messageWithStackLines,
  type RunEvent,
  STACK_FRAMES,
  stackLines,
} from "#src/console/public/console/logLines.js";

const t0 = 1_800_000_000_000;

describe("a project's log entries as lines", () => {
  const stack = "Error: kaboom\n    at explode (src/index.ts:6:9)\n    at Object.fetch (src/index.ts:12:20)";
  it.each<[string, LogEntry, string[]]>([
    [
      "a request",
      { seq: 1, at: t0, kind: "request", method: "GET", path: "/api/x?y=1", status: 200, ms: 4 },
      ["GET /api/x?y=1 → 200 in 4 ms"],
    ],
    [
      "requests counted past the log's budget",
      { seq: 6, at: t0, kind: "requests_skipped", count: 1900, keptPerWindow: 100, windowMS: 60_000 },
      [
        "… 1,900 more requests in this 1 min window, counted, not logged one by one (the log keeps the first 100 of each)",
      ],
    ],
    ["console.log", { seq: 2, at: t0, kind: "console", level: "log", message: 'hello {"n":1}' }, ['hello {"n":1}']],
    ["console.warn", { seq: 3, at: t0, kind: "console", level: "warn", message: "careful" }, ["warn: careful"]],
    [
      "console.error of an error, with its stack",
      {
        seq: 4,
        at: t0,
        kind: "console",
        level: "error",
        message: "Unhandled error in project worker: Error: kaboom",
        stack,
      },
      [
        "error: Unhandled error in project worker: Error: kaboom",
        "    at explode (src/index.ts:6:9)",
        "    at Object.fetch (src/index.ts:12:20)",
      ],
    ],
    [
      "an uncaught exception",
      { seq: 5, at: t0, kind: "exception", name: "TypeError", message: "x is not a function", stack },
      [
        "Uncaught TypeError: x is not a function",
        "    at explode (src/index.ts:6:9)",
        "    at Object.fetch (src/index.ts:12:20)",
      ],
    ],
  ])("%s", (_label, entry, lines) => {
    expect(formatLogEntry(entry)).toEqual(lines);
  });

  it(`shows at most ${STACK_FRAMES} frames, and says how many more`, () => {
    const frames = Array.from({ length: STACK_FRAMES + 3 }, (_, i) => `    at f${i} (src/a.ts:${i}:1)`);
    const shown = stackLines(["Error: deep", ...frames].join("\n"));
    expect(shown).toHaveLength(STACK_FRAMES + 1);
    expect(shown.at(-1)).toBe("    … 3 more");
    expect(stackLines(undefined)).toEqual([]);
  });
});

describe("a failed step's line carries its error and its stack", () => {
  const started: RunEvent = { seq: 2, type: "step_started", payload: { step: "charge", attempt: 1 }, at: t0 };
  const failed = (error: object | undefined, reason = "kaboom"): RunEvent => ({
    seq: 3,
    type: "step_failed",
    payload: { step: "charge", attempt: 1, reason, retryable: true, ...(error ? { error } : {}) },
    at: t0 + 5,
  });
  it.each<[string, RunEvent, string[]]>([
    [
      "without an error (a timeout)",
      failed(undefined, "timeout"),
      ["run 3f2a9c1d: charge#1 failed in 5 ms: timeout (will retry)"],
    ],
    [
      "an Error, with its frames beneath",
      failed({ name: "Error", message: "kaboom", stack: "Error: kaboom\n    at charge (src/index.ts:12:11)" }),
      ["run 3f2a9c1d: charge#1 failed in 5 ms: kaboom (will retry)", "    at charge (src/index.ts:12:11)"],
    ],
    [
      "another kind of error, named",
      failed({ name: "TypeError", message: "kaboom", stack: "TypeError: kaboom\n    at charge (src/index.ts:3:1)" }),
      ["run 3f2a9c1d: charge#1 failed in 5 ms: TypeError: kaboom (will retry)", "    at charge (src/index.ts:3:1)"],
    ],
  ])("%s", (_label, event, lines) => {
    expect(formatStepLines("3f2a9c1d-aaaa", "checkout", [event], [started])).toEqual(lines);
  });
});

describe("createStepFollower with a history", () => {
  it("prints, on its first tick, the steps of runs from `since` on, each with its event's time", async () => {
    const events: RunEvent[] = [
      { seq: 1, type: "workflow_created", payload: { workflowName: "w", writes: {} }, at: t0 },
      { seq: 2, type: "step_started", payload: { step: "a", attempt: 1 }, at: t0 + 10 },
      { seq: 3, type: "step_completed", payload: { step: "a", writes: {} }, at: t0 + 12 },
      { seq: 4, type: "workflow_completed", payload: { result: null }, at: t0 + 12 },
    ];
    const old = { id: "old-run", status: "completed", updatedAt: t0 - 100_000 };
    const recent = { id: "new-run", status: "completed", updatedAt: t0 + 12 };
    const printed: [string, number][] = [];
    const follower = createStepFollower({
      slug: "app",
      since: t0 + 5,
      get: async <T>(path: string) =>
        (path.includes("?")
          ? { runs: [recent, old] }
          : { id: "new-run", name: "w", status: "completed", updatedAt: t0 + 12, events }) as T,
      print: (line, at) => printed.push([line, at]),
    });
    await follower.tick();
    expect(printed).toEqual([
      ["run new-run: a#1 completed in 2 ms → done", t0 + 12],
      ["run new-run: w completed", t0 + 12],
    ]);
    await follower.tick();
    expect(printed).toHaveLength(2);
  });
});

describe("the platform's own frames of a stack", () => {
  const user = "at charge (src/index.ts:14:22)";
  const installed = "at WorkflowRun.step (node_modules/platform/dist/runtime.js:812:11)";
  const platformSource = "at runStep (/home/dev/platform/src/engine/runStep.ts:40:9)";
  const library = "at Router.handle (node_modules/itty-router/index.mjs:1:200)";
  const stack = (...frames: string[]) => ["Error: kaboom", ...frames.map((f) => `    ${f}`)].join("\n");
  it.each<[string, string, boolean, string[]]>([
    [
      "a run of them is one line",
      stack(user, installed, platformSource, installed),
      false,
      [`    ${user}`, "    … 3 platform frames"],
    ],
    [
      "runs between the project's frames each are one line",
      stack(installed, user, platformSource, library),
      false,
      ["    … 1 platform frame", `    ${user}`, "    … 1 platform frame", `    ${library}`],
    ],
    ["another library's frames are not the platform's", stack(library), false, [`    ${library}`]],
    [
      "--platform-frames shows them all",
      stack(user, installed, platformSource),
      true,
      [`    ${user}`, `    ${installed}`, `    ${platformSource}`],
    ],
  ])("%s", (_label, given, platformFrames, lines) => {
    expect(stackLines(given, platformFrames)).toEqual(lines);
  });

  it("applies to a log entry's stack, and the option shows them there too", () => {
    const entry: LogEntry = {
      seq: 1,
      at: t0,
      kind: "exception",
      name: "Error",
      message: "x",
      stack: stack(user, installed),
    };
    expect(formatLogEntry(entry)).toEqual(["Uncaught Error: x", `    ${user}`, "    … 1 platform frame"]);
    expect(formatLogEntry(entry, true)).toEqual(["Uncaught Error: x", `    ${user}`, `    ${installed}`]);
  });

  // What workerd logged under `platform dev`: a message whose stacks are shown by the same rule.
  it.each<[string, string, boolean, string]>([
    [
      "a handler's error: the project's frame, then one line for the platform's",
      `plugin chatserver handler failed: ${stack(user, installed, platformSource)}`,
      false,
      `plugin chatserver handler failed: Error: kaboom\n    ${user}\n    … 2 platform frames`,
    ],
    [
      "an error and its cause: each stack on its own",
      `${stack(installed, user)}\nCaused by: ${stack(platformSource, installed)}`,
      false,
      `Error: kaboom\n    … 1 platform frame\n    ${user}\nCaused by: Error: kaboom\n    … 2 platform frames`,
    ],
    ["a message without a stack is as logged", "Rebuilt in 40 ms", false, "Rebuilt in 40 ms"],
    [
      "--platform-frames shows them",
      stack(user, installed, platformSource),
      true,
      `Error: kaboom\n    ${user}\n    ${installed}\n    ${platformSource}`,
    ],
  ])("in a printed message, %s", (_label, message, platformFrames, printed) => {
    expect(messageWithStackLines(message, platformFrames)).toBe(printed);
  });
});
