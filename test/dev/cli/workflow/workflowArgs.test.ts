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
  ])("$argv with $values", ({ argv, values, means }) => {
    expect(parseWorkflowInvocation(argv, values as Values)).toEqual(means);
  });

  it("list keeps its filters as the query and --full", () => {
    const list = parseWorkflowInvocation(["list"], { status: "cancelled", limit: "5", full: true });
    expect(list).toMatchObject({ action: "list", full: true });
    expect(list.action === "list" && list.query.toString()).toBe("status=cancelled&limit=5");
  });
});

describe("platform workflow: usage errors exit 2 with one line", () => {
  it.each([
    { argv: [], values: {}, message: 'Unknown workflow action "": use list, get, start, cancel, send.' },
    {
      argv: ["stop", "r1"],
      values: {},
      message: 'Unknown workflow action "stop": use list, get, start, cancel, send.',
    },
    { argv: ["get"], values: {}, message: "platform workflow get needs a run id." },
    { argv: ["start"], values: {}, message: "platform workflow start needs a workflow name." },
    { argv: ["send", "r1"], values: {}, message: "platform workflow send needs an event name." },
    { argv: ["send"], values: {}, message: "platform workflow send needs a run id and an event name." },
    { argv: ["cancel", "r1", "r2"], values: {}, message: "Unexpected arguments: r2" },
    { argv: ["list", "r1"], values: {}, message: "Unexpected arguments: r1" },
    {
      argv: ["start", "remind"],
      values: { data: "{to: ada}" },
      message: /^--data must be JSON \(e\.g\. '\{"order":42\}'\): /,
    },
    { argv: ["send", "r1", "approval"], values: { data: "" }, message: /^--data must be JSON/ },
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
