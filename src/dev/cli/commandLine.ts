import { parseArgs, type ParseArgsConfig } from "node:util";

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
    throw new CliError(`${(error as Error).message}. Usage: ${command.usage}`, 2);
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

export function formatHelp(command: Command): string {
  return `Usage: ${command.usage}\n\n${command.summary}\n\n${command.help.trim()}\n`;
}
