import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  setCronRegistrar,
  workflow,
  workflowDefinitions,
  type WorkflowBackend,
} from "#src/engine/api/workflowApi.ts";
import { rejection } from "#test/support/workflow/index.ts";

const start = async () => ({ done: true as const });

function view(status: WorkflowRunView["status"], extra: Partial<WorkflowRunView> = {}): WorkflowRunView {
  return { id: "r1", workflowId: "r1", name: "greet", status, createdAt: 0, updatedAt: 0, events: [], ...extra };
}

/** A backend whose every method is a spy; `get` answers from a queue of views. */
function fakeBackend(views: WorkflowRunView[] = []) {
  return {
    start: vi.fn(async () => ({ runId: "r1", workflowId: "r1", created: true })),
    get: vi.fn(async () => views.shift() ?? null),
    list: vi.fn(async () => ({ runs: [] })),
    send: vi.fn(async () => {}),
    sendOrStart: vi.fn(async () => ({ runId: "r1", workflowId: "w1", created: true })),
    cancel: vi.fn(async () => view("cancelled")),
    pause: vi.fn(async () => view("paused")),
    resume: vi.fn(async () => view("running")),
    rerun: vi.fn(async () => ({ runId: "r2", workflowId: "r2", created: true, name: "greet" })),
    countRuns: vi.fn(async () => 0),
    cancelMany: vi.fn(async () => ({ matched: 0, affected: 0 })),
    rerunMany: vi.fn(async () => ({ matched: 0, affected: 0 })),
    findStrandedRuns: vi.fn(async () => ({ count: 0, runs: [] })),
  } satisfies WorkflowBackend;
}

beforeEach(() => resetWorkflowsForTests());
afterEach(() => {
  vi.useRealTimers();
  resetWorkflowsForTests();
});

describe("workflow(name, steps, options): the registry", () => {
  it("registers validated definitions by name", () => {
    const definition = workflow("greet", { start }, { maxAttempts: 5 });
    expect(getWorkflowDefinition("greet")).toBe(definition);
    expect(definition.maxAttempts).toBe(5);
    expect(workflowDefinitions().map((d) => d.name)).toEqual(["greet"]);
  });

  it("refuses a duplicate name and a workflow without a start step", () => {
    workflow("greet", { start });
    expect(() => workflow("greet", { start })).toThrow(/already registered/);
    expect(() => workflow("nostart", { begin: start })).toThrow(/no "start" step/);
    expect(workflowDefinitions()).toHaveLength(1);
  });

  it("registers the recovery cron once, on the first workflow() call", () => {
    const registrar = vi.fn();
    setCronRegistrar(registrar);
    expect(registrar).not.toHaveBeenCalled();
    workflow("a", { start });
    workflow("b", { start });
    expect(registrar).toHaveBeenCalledTimes(1);
    expect(registrar).toHaveBeenCalledWith({ name: "__workflow-recovery", schedule: "* * * * *" });
  });

  it("registers the recovery cron as soon as a registrar arrives after workflows were defined", () => {
    workflow("a", { start });
    const registrar = vi.fn();
    setCronRegistrar(registrar);
    expect(registrar).toHaveBeenCalledTimes(1);
  });
});

describe("workflow.start/get/list", () => {
  it("are not ready before a backend is installed", async () => {
    workflow("greet", { start });
    for (const call of [workflow.start("greet"), workflow.get("r1"), workflow.list()]) {
      const error = await rejection(call);
      expect(error.code).toBe("not_ready");
      expect(error.message).toMatch(/not available yet/);
    }
  });

  it("start checks the name and the data before asking the backend", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    workflow("greet", { start });
    const unknown = await rejection(workflow.start("nope", {}));
    expect(unknown.code).toBe("unknown_workflow");
    expect(unknown.message).toMatch(/registered: greet/);
    expect((await rejection(workflow.start("greet", { f: () => 1 }))).code).toBe("invalid_input");
    expect((await rejection(workflow.start("greet", 1, { id: 42 as never }))).code).toBe("invalid_input");
    expect(backend.start).not.toHaveBeenCalled();
  });

  it("start hands JSON data and the id to the backend and returns a handle", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    workflow("greet", { start });
    const run = await workflow.start("greet", { name: "Ada" }, { id: "order-42" });
    expect(backend.start).toHaveBeenCalledWith("greet", { name: "Ada" }, { id: "order-42" });
    expect(run).toMatchObject({ id: "r1", workflowId: "r1", name: "greet", created: true });
    await workflow.start("greet");
    expect(backend.start).toHaveBeenLastCalledWith("greet", null, {});
  });

  it("start takes the definition workflow() returned, by its name; an unregistered one is unknown", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    const greet = workflow<{ name: string }, Record<string, never>, string>("greet", {
      start: async (ctx) => ({ done: true, result: `Hello, ${ctx.data.name}` }),
    });
    const run = await workflow.start(greet, { name: "Ada" });
    expect(backend.start).toHaveBeenCalledWith("greet", { name: "Ada" }, {});
    expect(run.name).toBe("greet");
    const stray = { ...greet, name: "never-registered" };
    expect((await rejection(workflow.start(stray, { name: "Ada" }))).code).toBe("unknown_workflow");
  });

  it("list validates and defaults its filter", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    await workflow.list({ name: "greet", status: "running" });
    expect(backend.list).toHaveBeenCalledWith({ name: "greet", status: "running", limit: 50 });
    for (const filter of [{ limit: 0 }, { limit: 101 }, { status: "sleeping" as never }, { cursor: "" }]) {
      expect((await rejection(workflow.list(filter))).code).toBe("invalid_input");
    }
  });
});

describe("workflow.send and workflow.cancel", () => {
  it("send checks the run id, the event name and the payload before asking the backend", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    const cases: [string, unknown, unknown, string][] = [
      ["", "approval", null, "invalid_input"],
      ["r1", "", null, "invalid_input"],
      ["r1", "a\nb", null, "invalid_input"],
      ["r1", "x".repeat(257), null, "invalid_input"],
      ["r1", 42, null, "invalid_input"],
      ["r1", "approval", { when: new Date() }, "invalid_input"],
      ["r1", "approval", "x".repeat(1024 * 1024), "payload_too_large"],
    ];
    for (const [runId, name, payload, code] of cases) {
      expect((await rejection(workflow.send(runId, name as string, payload))).code).toBe(code);
    }
    expect(backend.send).not.toHaveBeenCalled();
    await workflow.send("r1", "approval", { by: "ada" });
    await workflow.send("r1", "ping");
    expect(backend.send.mock.calls).toEqual([
      ["r1", "approval", { by: "ada" }],
      ["r1", "ping", null],
    ]);
  });

  it("cancel checks its input and answers the backend's view", async () => {
    const backend = fakeBackend();
    installWorkflowBackend(backend);
    expect((await rejection(workflow.cancel(""))).code).toBe("invalid_input");
    expect((await rejection(workflow.cancel("r1", 7 as never))).code).toBe("invalid_input");
    expect(backend.cancel).not.toHaveBeenCalled();
    expect(await workflow.cancel("r1", "no longer needed")).toMatchObject({ status: "cancelled" });
    expect(backend.cancel).toHaveBeenCalledWith("r1", "no longer needed");
  });
});

describe("run.result()", () => {
  it("rejects with cancelled for a cancelled run", async () => {
    const cancelled = view("cancelled", { cancelReason: "no longer needed" });
    installWorkflowBackend(fakeBackend([cancelled]));
    workflow("greet", { start });
    const error = await rejection((await workflow.start("greet")).result());
    expect(error.code).toBe("cancelled");
    expect(error.message).toMatch(/no longer needed/);
    expect(error.details).toEqual({ runId: "r1", reason: "no longer needed" });
  });

  it("polls get every second until the run is terminal, then resolves with the result", async () => {
    vi.useFakeTimers();
    const backend = fakeBackend([view("running"), view("running"), view("completed", { result: { hello: "Ada" } })]);
    installWorkflowBackend(backend);
    workflow("greet", { start });
    const run = await workflow.start("greet");
    const result = run.result();
    await vi.advanceTimersByTimeAsync(0);
    expect(backend.get).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(999);
    expect(backend.get).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(backend.get).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(result).resolves.toEqual({ hello: "Ada" });
    expect(backend.get).toHaveBeenCalledTimes(3);
  });

  it("rejects with workflow_failed whose message is the failure reason", async () => {
    const failed = view("failed", {
      error: "card declined",
      events: [
        { seq: 4, type: "workflow_failed", payload: { reason: "card declined", cause: "non_retryable" }, at: 0 },
      ],
    });
    installWorkflowBackend(fakeBackend([failed]));
    workflow("greet", { start });
    const error = await rejection((await workflow.start("greet")).result());
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe("workflow_failed");
    expect(error.message).toBe("card declined");
    expect(error.details).toEqual({ runId: "r1", cause: "non_retryable" });
  });

  it("uses the backend's waitForTerminal instead of polling when it has one", async () => {
    const backend = { ...fakeBackend(), waitForTerminal: vi.fn(async () => view("completed", { result: 7 })) };
    installWorkflowBackend(backend);
    workflow("greet", { start });
    await expect((await workflow.start("greet")).result()).resolves.toBe(7);
    expect(backend.waitForTerminal).toHaveBeenCalledWith("r1");
    expect(backend.get).not.toHaveBeenCalled();
  });

  it("rejects with not_found when the run disappears", async () => {
    installWorkflowBackend(fakeBackend([]));
    workflow("greet", { start });
    expect((await rejection((await workflow.start("greet")).result())).code).toBe("not_found");
  });
});
