import { parseArgs, type ParseArgsConfig } from "node:util";
import { closestName } from "../../core/closestName.ts";

/** A failure the CLI reports as one line and a non-zero exit code. */
export class CliError extends Error {
  readonly exitCode: number;
  /** Printed as is, without the usual `platform: ` prefix (a message that already names the command). */
  readonly bare: boolean;
  constructor(message: string, exitCode = 1, options: { bare?: boolean } = {}) {
    super(message);
    this.exitCode = exitCode;
    this.bare = options.bare === true;
  }
}

export interface Command {
  summary: string;
  usage: string;
  help: string;
  options: NonNullable<ParseArgsConfig["options"]>;
  run(args: {
    positionals: string[];
    values: Record<string, string | boolean | undefined>;
  }): Promise<number | undefined>;
}

/** A command's options declared by kind: `cliOptions({ strings: ["dir"], booleans: ["json"] })`. */
export function cliOptions(kinds: { strings?: string[]; booleans?: string[] }): Command["options"] {
  return Object.fromEntries([
    ...(kinds.strings ?? []).map((name) => [name, { type: "string" as const }]),
    ...(kinds.booleans ?? []).map((name) => [name, { type: "boolean" as const }]),
  ]);
}

export function parseCommandArgs(command: Command, argv: string[]) {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { ...command.options, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    });
    return { values: values as Record<string, string | boolean | undefined>, positionals };
  } catch (error) {
    throw new CliError(`${parseErrorText(command, error as Error & { code?: string })} Usage: ${command.usage}`, 2);
  }
}

/**
 * Every value of an option declared `multiple: true` (`--field a=1 --field b=2`), in order; `values` types
 * options as single strings, so a repeatable one is read through this.
 */
export function repeatedOption(values: Record<string, unknown>, name: string): string[] {
  const value = values[name];
  return Array.isArray(value) ? value.map(String) : typeof value === "string" ? [value] : [];
}

/** Node's parser messages in the CLI's words: which option, what is wrong with it, and the option meant when it is a typo. */
function parseErrorText(command: Command, error: Error & { code?: string }): string {
  const option = /'(--?[^'\s=<]+)/.exec(error.message)?.[1];
  if (!option) return `${error.message}.`;
  if (error.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") {
    const known = [...Object.keys(command.options), "help"].map((name) => `--${name}`);
    const meant = closestName(option.startsWith("--") ? option : `-${option}`, known);
    return `Unknown option ${option}${meant ? ` (did you mean ${meant}?)` : ""}.`;
  }
  if (/argument missing/.test(error.message)) return `${option} needs a value.`;
  if (/does not take an argument/.test(error.message)) return `${option} takes no value.`;
  return `${error.message}.`;
}

/**
 * A word that is none of `choices` (a command, an action): a usage error (exit 2) naming the
 * choices, or the one it most likely meant: `Unknown command "pusj" (did you mean "push"?).`
 */
export function unknownChoiceError(
  what: string,
  given: string | undefined,
  choices: readonly string[],
  hint = "",
): CliError {
  const meant = given ? closestName(given, choices) : undefined;
  const suggestion = meant ? ` (did you mean "${meant}"?)` : `: use ${choices.join(", ")}`;
  return new CliError(`Unknown ${what} "${given ?? ""}"${suggestion}.${hint ? ` ${hint}` : ""}`, 2);
}

export function formatHelp(command: Command): string {
  return `Usage: ${command.usage}\n\n${command.summary}\n\n${command.help.trim()}\n`;
}
