import { describe, expect, it } from "vitest";
import { CliError, cliOptions, parseCommandArgs, unknownChoiceError, type Command } from "#src/dev/cli/commandLine.ts";

const command: Command = {
  summary: "",
  usage: "platform thing [--name N] [--wait]",
  help: "",
  options: cliOptions({ strings: ["name", "data"], booleans: ["wait"] }),
  run: async () => 0,
};

function parseError(argv: string[]): CliError {
  try {
    parseCommandArgs(command, argv);
  } catch (error) {
    return error as CliError;
  }
  throw new Error("parsed");
}

describe("option errors say which option and what was meant", () => {
  it.each([
    [["--nmae", "x"], "Unknown option --nmae (did you mean --name?). Usage: platform thing [--name N] [--wait]"],
    [["--wiat"], "Unknown option --wiat (did you mean --wait?). Usage: platform thing [--name N] [--wait]"],
    [["--frobnicate"], "Unknown option --frobnicate. Usage: platform thing [--name N] [--wait]"],
    [["-z"], "Unknown option -z. Usage: platform thing [--name N] [--wait]"],
    [["--name"], "--name needs a value. Usage: platform thing [--name N] [--wait]"],
    [["--wait=yes"], "--wait takes no value. Usage: platform thing [--name N] [--wait]"],
  ])("%j → %s", (argv, message) => {
    const error = parseError(argv);
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(message);
  });

  it("parses what it knows", () => {
    expect(parseCommandArgs(command, ["a", "--name", "n", "--wait"])).toEqual({
      positionals: ["a"],
      values: { name: "n", wait: true },
    });
  });
});

describe("unknown commands and actions", () => {
  it.each([
    ["pusj", 'Unknown command "pusj" (did you mean "push"?).'],
    ["PUSH", 'Unknown command "PUSH" (did you mean "push"?).'],
    ["frobnicate", 'Unknown command "frobnicate": use push, logs, secret.'],
    [undefined, 'Unknown command "": use push, logs, secret.'],
  ])("%s → %s", (given, message) => {
    const error = unknownChoiceError("command", given, ["push", "logs", "secret"]);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(message);
  });
});
