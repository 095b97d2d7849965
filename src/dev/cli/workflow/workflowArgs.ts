import { CliError, unknownChoiceError } from "../commandLine.ts";
import { RUN_FILTER_OPTIONS, runFilterOf } from "./runFilterArgs.ts";

/** One `platform workflow …` invocation, checked: what to do and with which values. */
export type WorkflowInvocation =
  | { action: "list"; query: URLSearchParams; full: boolean }
  | { action: "get"; runId: string }
  | {
      action: "start";
      name: string;
      data?: unknown;
      id?: string;
      idempotencyKey?: string;
      priority?: number;
      wait: boolean;
    }
  | { action: "cancel"; runId: string; reason?: string }
  | { action: "send"; runId: string; event: string; payload?: unknown }
  /** `send <workflowId> <event> --start NAME`: to the id's active run, or a new run of NAME with it. */
  | { action: "sendOrStart"; workflowId: string; event: string; payload?: unknown; start: string; startData?: unknown }
  | { action: "pause"; runId: string; reason?: string }
  | { action: "resume"; runId: string }
  | { action: "rerun"; runId: string; fromStep?: string }
  /** `cancel` or `rerun` of every run the filter flags match: counted only, unless `yes`. */
  | {
      action: "bulk";
      kind: "cancel" | "rerun";
      filter: Record<string, string | number>;
      reason?: string;
      fromStep?: string;
      yes: boolean;
    };

type Values = Record<string, string | boolean | undefined>;

const ACTIONS = ["list", "get", "start", "cancel", "send", "pause", "resume", "rerun"] as const;

/** Which options each action takes, besides --dir, --api and --json. */
const ACTION_OPTIONS: Record<(typeof ACTIONS)[number], readonly string[]> = {
  list: [...RUN_FILTER_OPTIONS, "limit", "cursor", "full"],
  get: [],
  start: ["data", "id", "idempotency-key", "priority", "wait"],
  cancel: ["reason", "yes", ...RUN_FILTER_OPTIONS],
  send: ["data", "start", "start-data"],
  pause: ["reason"],
  resume: [],
  rerun: ["from-step", "yes", ...RUN_FILTER_OPTIONS],
};

/** Parses `--data` (or the option named): JSON, or a usage error (exit 2) in one line. */
export function parseDataOption(text: string, option = "data"): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const why = (error as Error).message.split("\n")[0];
    throw new CliError(`--${option} must be JSON (e.g. '{"order":42}'): ${why}`, 2);
  }
}

/** `--priority`: a whole number from 1 to 10, or a usage error. */
function priorityOption(text: string): number {
  const priority = Number(text);
  if (!/^\d+$/.test(text) || priority < 1 || priority > 10)
    throw usage(`--priority must be a whole number from 1 to 10 (default 5), got ${JSON.stringify(text)}.`);
  return priority;
}

function usage(message: string): CliError {
  return new CliError(message, 2);
}

/**
 * Checks the positionals and options of `platform workflow <action> …`;
 * usage errors exit 2. `now` reads `--since 2h` and `--until`.
 */
export function parseWorkflowInvocation(
  positionals: string[],
  values: Values,
  now: number = Date.now(),
): WorkflowInvocation {
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
      for (const [key, value] of Object.entries(runFilterOf(values, now))) query.set(key, String(value));
      for (const key of ["limit", "cursor"]) {
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
        ...(typeof values.priority === "string" ? { priority: priorityOption(values.priority) } : {}),
        wait: values.wait === true,
      };
    }
    case "cancel":
    case "rerun": {
      const filter = runFilterOf(values, now);
      const reason = typeof values.reason === "string" ? { reason: values.reason } : {};
      const fromStep = typeof values["from-step"] === "string" ? { fromStep: values["from-step"] } : {};
      if (Object.keys(filter).length > 0) {
        if (args.length > 0)
          throw usage(`platform workflow ${act} takes a run id or filter flags (--status, --name, …), not both.`);
        return { action: "bulk", kind: act, filter, ...reason, ...fromStep, yes: values.yes === true };
      }
      if (values.yes !== undefined) throw usage(`--yes is for filters: platform workflow ${act} --status … --yes.`);
      expect(["a run id (or filter flags such as --status and --name)"]);
      return act === "cancel"
        ? { action: "cancel", runId: args[0]!, ...reason }
        : { action: "rerun", runId: args[0]!, ...fromStep };
    }
    case "pause":
      expect(["a run id"]);
      return {
        action: "pause",
        runId: args[0]!,
        ...(typeof values.reason === "string" ? { reason: values.reason } : {}),
      };
    case "resume":
      expect(["a run id"]);
      return { action: "resume", runId: args[0]! };
    case "send": {
      const payload = typeof values.data === "string" ? { payload: parseDataOption(values.data) } : {};
      if (typeof values.start === "string") {
        expect(["a workflow id", "an event name"]);
        if (values.start === "") throw usage("--start must name the workflow to start.");
        return {
          action: "sendOrStart",
          workflowId: args[0]!,
          event: args[1]!,
          ...payload,
          start: values.start,
          ...(typeof values["start-data"] === "string"
            ? { startData: parseDataOption(values["start-data"], "start-data") }
            : {}),
        };
      }
      if (values["start-data"] !== undefined) throw usage("--start-data goes with --start NAME.");
      expect(["a run id", "an event name"]);
      return { action: "send", runId: args[0]!, event: args[1]!, ...payload };
    }
  }
}
