import { CliError, unknownChoiceError } from "../commandLine.ts";

/** One `platform workflow …` invocation, checked: what to do and with which values. */
export type WorkflowInvocation =
  | { action: "list"; query: URLSearchParams; full: boolean }
  | { action: "get"; runId: string }
  | { action: "start"; name: string; data?: unknown; id?: string; idempotencyKey?: string; wait: boolean }
  | { action: "cancel"; runId: string; reason?: string }
  | { action: "send"; runId: string; event: string; payload?: unknown };

type Values = Record<string, string | boolean | undefined>;

const ACTIONS = ["list", "get", "start", "cancel", "send"] as const;

/** Which options each action takes, besides --dir, --api and --json. */
const ACTION_OPTIONS: Record<(typeof ACTIONS)[number], readonly string[]> = {
  list: ["status", "name", "limit", "cursor", "full"],
  get: [],
  start: ["data", "id", "idempotency-key", "wait"],
  cancel: ["reason"],
  send: ["data"],
};

/** Parses `--data`: JSON, or a usage error (exit 2) in one line. */
export function parseDataOption(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const why = (error as Error).message.split("\n")[0];
    throw new CliError(`--data must be JSON (e.g. '{"order":42}'): ${why}`, 2);
  }
}

function usage(message: string): CliError {
  return new CliError(message, 2);
}

/** Checks the positionals and options of `platform workflow <action> …`; usage errors exit 2. */
export function parseWorkflowInvocation(positionals: string[], values: Values): WorkflowInvocation {
  const [action, ...args] = positionals;
  if (!(ACTIONS as readonly (string | undefined)[]).includes(action))
    throw unknownChoiceError("workflow action", action, ACTIONS);
  const act = action as (typeof ACTIONS)[number];
  const misplaced = Object.values(ACTION_OPTIONS)
    .flat()
    .find((option) => values[option] !== undefined && !ACTION_OPTIONS[act].includes(option));
  if (misplaced) throw usage(`platform workflow ${act} does not take --${misplaced}.`);
  const expect = (names: string[]) => {
    if (args.length < names.length)
      throw usage(`platform workflow ${act} needs ${names.slice(args.length).join(" and ")}.`);
    if (args.length > names.length) throw usage(`Unexpected arguments: ${args.slice(names.length).join(" ")}`);
  };
  switch (act) {
    case "list": {
      expect([]);
      const query = new URLSearchParams();
      for (const key of ["status", "name", "limit", "cursor"]) {
        if (typeof values[key] === "string") query.set(key, values[key] as string);
      }
      return { action: "list", query, full: values.full === true };
    }
    case "get":
      expect(["a run id"]);
      return { action: "get", runId: args[0]! };
    case "start": {
      expect(["a workflow name"]);
      if (values.id === "") throw usage("--id must not be empty.");
      return {
        action: "start",
        name: args[0]!,
        ...(typeof values.data === "string" ? { data: parseDataOption(values.data) } : {}),
        ...(typeof values.id === "string" ? { id: values.id } : {}),
        ...(typeof values["idempotency-key"] === "string" ? { idempotencyKey: values["idempotency-key"] } : {}),
        wait: values.wait === true,
      };
    }
    case "cancel":
      expect(["a run id"]);
      return {
        action: "cancel",
        runId: args[0]!,
        ...(typeof values.reason === "string" ? { reason: values.reason } : {}),
      };
    case "send":
      expect(["a run id", "an event name"]);
      return {
        action: "send",
        runId: args[0]!,
        event: args[1]!,
        ...(typeof values.data === "string" ? { payload: parseDataOption(values.data) } : {}),
      };
  }
}
