import { describe, expect, it } from "vitest";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { parseWorkflowInvocation } from "#src/dev/cli/workflow/workflowArgs.ts";

type Values = Record<string, string | boolean | undefined>;

describe("platform workflow: what each invocation means", () => {
  it.each([
    { argv: ["get", "3f2a9c1d"], values: {}, means: { action: "get", runId: "3f2a9c1d" } },
    { argv: ["start", "remind"], values: {}, means: { action: "start", name: "remind", wait: false } },
    {
      argv: ["start", "remind"],
      values: { data: '{"to":"ada"}', id: "order-42", wait: true },
      means: { action: "start", name: "remind", data: { to: "ada" }, id: "order-42", wait: true },
    },
    {
      argv: ["start", "remind"],
      values: { data: "null" },
      means: { action: "start", name: "remind", data: null, wait: false },
    },
    { argv: ["cancel", "r1"], values: {}, means: { action: "cancel", runId: "r1" } },
    {
      argv: ["cancel", "r1"],
      values: { reason: "no longer needed" },
      means: { action: "cancel", runId: "r1", reason: "no longer needed" },
    },
    { argv: ["send", "r1", "approval"], values: {}, means: { action: "send", runId: "r1", event: "approval" } },
    {
      argv: ["send", "r1", "approval"],
      values: { data: '{"by":"ada"}' },
      means: { action: "send", runId: "r1", event: "approval", payload: { by: "ada" } },
    },
    {
      argv: ["send", "order-7", "item"],
      values: { start: "gatherer", data: '{"n":1}', "start-data": '{"want":2}' },
      means: {
        action: "sendOrStart",
        workflowId: "order-7",
        event: "item",
        payload: { n: 1 },
        start: "gatherer",
        startData: { want: 2 },
      },
    },
    {
      argv: ["start", "urgent"],
      values: { priority: "9" },
      means: { action: "start", name: "urgent", priority: 9, wait: false },
    },
    {
      argv: ["send", "order-7", "item"],
      values: { start: "gatherer" },
      means: { action: "sendOrStart", workflowId: "order-7", event: "item", start: "gatherer" },
    },
  ])("$argv with $values", ({ argv, values, means }) => {
    expect(parseWorkflowInvocation(argv, values as Values)).toEqual(means);
  });

  it.each([
    { argv: ["pause", "r1"], values: { reason: "look" }, means: { action: "pause", runId: "r1", reason: "look" } },
    { argv: ["resume", "r1"], values: {}, means: { action: "resume", runId: "r1" } },
    { argv: ["rerun", "r1"], values: {}, means: { action: "rerun", runId: "r1" } },
    {
      argv: ["rerun", "r1"],
      values: { "from-step": "charge" },
      means: { action: "rerun", runId: "r1", fromStep: "charge" },
    },
    {
      argv: ["cancel"],
      values: { status: "running", name: "checkout" },
      means: { action: "bulk", kind: "cancel", filter: { status: "running", name: "checkout" }, yes: false },
    },
    {
      argv: ["cancel"],
      values: { status: "running", reason: "outage", yes: true },
      means: { action: "bulk", kind: "cancel", filter: { status: "running" }, reason: "outage", yes: true },
    },
    {
      argv: ["rerun"],
      values: { status: "failed", step: "charge", "from-step": "charge", yes: true },
      means: {
        action: "bulk",
        kind: "rerun",
        filter: { status: "failed", step: "charge" },
        fromStep: "charge",
        yes: true,
      },
    },
  ])("$argv with $values (run operations)", ({ argv, values, means }) => {
    expect(parseWorkflowInvocation(argv, values as Values)).toEqual(means);
  });

  it("reads --since and --until as a duration ago, epoch ms or an ISO date", () => {
    const now = Date.UTC(2026, 10, 25, 12, 0, 0);
    const at = (since: string) => {
      const list = parseWorkflowInvocation(["list"], { since }, now);
      return list.action === "list" ? Number(list.query.get("since")) : Number.NaN;
    };
    expect(at("2h")).toBe(now - 2 * 3_600_000);
    expect(at("15m")).toBe(now - 15 * 60_000);
    expect(at("7d")).toBe(now - 7 * 86_400_000);
    expect(at("90s")).toBe(now - 90_000);
    expect(at("1764000000000")).toBe(1764000000000);
    expect(at("2026-11-25T10:00Z")).toBe(Date.UTC(2026, 10, 25, 10, 0, 0));
    expect(() => parseWorkflowInvocation(["list"], { until: "yesterday" }, now)).toThrow(/--until must be a duration/);
  });

  it("list passes every filter flag as workflow.list's field", () => {
    const list = parseWorkflowInvocation(
      ["list"],
      {
        status: "failed",
        step: "charge",
        error: "card_declined",
        "id-prefix": "3f2a",
        version: "v3",
        name: "checkout",
        "rerun-of": "r0",
        until: "1000",
      },
      0,
    );
    expect(list.action === "list" && Object.fromEntries(list.query)).toEqual({
      status: "failed",
      step: "charge",
      error: "card_declined",
      idPrefix: "3f2a",
      version: "v3",
      name: "checkout",
      rerunOf: "r0",
      until: "1000",
    });
  });

  it("list keeps its filters as the query and --full", () => {
    const list = parseWorkflowInvocation(["list"], { status: "cancelled", limit: "5", full: true });
    expect(list).toMatchObject({ action: "list", full: true });
    expect(list.action === "list" && list.query.toString()).toBe("status=cancelled&limit=5");
  });
});

describe("platform workflow: usage errors exit 2 with one line", () => {
  it.each([
    {
      argv: [],
      values: {},
      message: 'Unknown workflow action "": use list, get, start, cancel, send, pause, resume, rerun.',
    },
    {
      argv: ["stop", "r1"],
      values: {},
      message: 'Unknown workflow action "stop": use list, get, start, cancel, send, pause, resume, rerun.',
    },
    { argv: ["get"], values: {}, message: "platform workflow get needs a run id." },
    { argv: ["start"], values: {}, message: "platform workflow start needs a workflow name." },
    { argv: ["send", "r1"], values: {}, message: "platform workflow send needs an event name." },
    { argv: ["send"], values: {}, message: "platform workflow send needs a run id and an event name." },
    { argv: ["cancel", "r1", "r2"], values: {}, message: "Unexpected arguments: r2" },
    {
      argv: ["cancel", "r1"],
      values: { status: "running" },
      message: "platform workflow cancel takes a run id or filter flags (--status, --name, …), not both.",
    },
    {
      argv: ["cancel", "r1"],
      values: { yes: true },
      message: "--yes is for filters: platform workflow cancel --status … --yes.",
    },
    { argv: ["pause"], values: {}, message: "platform workflow pause needs a run id." },
    { argv: ["resume", "r1"], values: { reason: "x" }, message: "platform workflow resume does not take --reason." },
    { argv: ["rerun", "r1"], values: { reason: "x" }, message: "platform workflow rerun does not take --reason." },
    { argv: ["list", "r1"], values: {}, message: "Unexpected arguments: r1" },
    {
      argv: ["start", "remind"],
      values: { data: "{to: ada}" },
      message: /^--data must be JSON \(e\.g\. '\{"order":42\}'\): /,
    },
    { argv: ["send", "r1", "approval"], values: { data: "" }, message: /^--data must be JSON/ },
    {
      argv: ["start", "w"],
      values: { priority: "11" },
      message: '--priority must be a whole number from 1 to 10 (default 5), got "11".',
    },
    {
      argv: ["start", "w"],
      values: { priority: "high" },
      message: '--priority must be a whole number from 1 to 10 (default 5), got "high".',
    },
    {
      argv: ["send", "r1", "e"],
      values: { priority: "9" },
      message: "platform workflow send does not take --priority.",
    },
    {
      argv: ["send", "order-7", "item"],
      values: { start: "gatherer", "start-data": "{n}" },
      message: /^--start-data must be JSON/,
    },
    { argv: ["send", "r1", "item"], values: { "start-data": "{}" }, message: "--start-data goes with --start NAME." },
    { argv: ["send", "order-7", "item"], values: { start: "" }, message: "--start must name the workflow to start." },
    {
      argv: ["send", "order-7"],
      values: { start: "gatherer" },
      message: "platform workflow send needs an event name.",
    },
    { argv: ["start", "remind"], values: { id: "" }, message: "--id must not be empty." },
    { argv: ["cancel", "r1"], values: { data: "{}" }, message: "platform workflow cancel does not take --data." },
    { argv: ["get", "r1"], values: { wait: true }, message: "platform workflow get does not take --wait." },
    { argv: ["send", "r1", "e"], values: { reason: "x" }, message: "platform workflow send does not take --reason." },
    { argv: ["start", "remind"], values: { full: true }, message: "platform workflow start does not take --full." },
  ])("$argv with $values", ({ argv, values, message }) => {
    let caught: unknown;
    try {
      parseWorkflowInvocation(argv, values as Values);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(CliError);
    const error = caught as CliError;
    expect(error.exitCode).toBe(2);
    expect(error.message).not.toContain("\n");
    if (typeof message === "string") expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });
});
