import { formatHelp, parseCommandArgs, CliError, type Command } from "./commandLine.ts";
import { devCommand } from "./commands/dev.ts";
import { initCommand } from "./commands/init.ts";
import { pluginCommand } from "./commands/plugin.ts";
import { pushCommand } from "./commands/push.ts";
import { workflowCommand } from "./commands/workflow.ts";

const COMMANDS: Record<string, Command> = {
  init: initCommand,
  dev: devCommand,
  push: pushCommand,
  workflow: workflowCommand,
  plugin: pluginCommand,
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return `Usage: platform <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun \`platform <command> --help\` for a command's options.\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) throw new CliError(`Unknown command "${name}". Run \`platform --help\` for the list.`, 2);
  const args = parseCommandArgs(command, rest);
  if (args.values.help) {
    process.stdout.write(formatHelp(command));
    return 0;
  }
  return (await command.run(args)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof CliError ? error.message : error instanceof Error ? error.message : String(error);
    console.error(`platform: ${message.split("\n")[0]}`);
    if (!(error instanceof CliError) && process.env.PLATFORM_DEBUG) console.error(error);
    process.exit(error instanceof CliError ? error.exitCode : 1);
  },
);
