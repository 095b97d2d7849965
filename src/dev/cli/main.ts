import { Socket } from "node:net";
import { formatHelp, parseCommandArgs, CliError, type Command, unknownChoiceError } from "./commandLine.ts";
import { consoleCommand } from "./commands/console.ts";
import { devCommand } from "./commands/dev.ts";
import { emailCommand } from "./commands/email.ts";
import { initCommand } from "./commands/init.ts";
import { loginCommand } from "./commands/login.ts";
import { logsCommand } from "./commands/logs.ts";
import { logoutCommand } from "./commands/logout.ts";
import { pluginCommand } from "./commands/plugin.ts";
import { pushCommand } from "./commands/push.ts";
import { secretCommand } from "./commands/secret.ts";
import { upCommand } from "./commands/up.ts";
import { whoamiCommand } from "./commands/whoami.ts";
import { webhookCommand } from "./commands/webhook.ts";
import { workflowCommand } from "./commands/workflow.ts";

const COMMANDS: Record<string, Command> = {
  init: initCommand,
  dev: devCommand,
  up: upCommand,
  console: consoleCommand,
  login: loginCommand,
  logout: logoutCommand,
  whoami: whoamiCommand,
  push: pushCommand,
  secret: secretCommand,
  logs: logsCommand,
  workflow: workflowCommand,
  webhook: webhookCommand,
  plugin: pluginCommand,
  email: emailCommand,
};

function usage(): string {
  const lines = Object.entries(COMMANDS).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return `Usage: platform <command> [options]\n\nCommands:\n${lines.join("\n")}\n\nRun \`platform <command> --help\` for a command's options.\n`;
}

/**
 * Started by bin/platform.js under another Node: that wrapper holds the other
 * end of this pipe, and when it ends (the wrapper was killed, even with
 * SIGKILL) this process stops as on SIGTERM, so `platform dev` shuts down
 * cleanly instead of outliving the command the user started.
 */
function stopWhenWrapperDies(): void {
  const fd = Number(process.env.PLATFORM_WRAPPER_PIPE_FD);
  delete process.env.PLATFORM_WRAPPER_PIPE_FD;
  if (!Number.isInteger(fd) || fd < 3) return;
  const pipe = new Socket({ fd, readable: true, writable: false });
  const stop = () => process.kill(process.pid, "SIGTERM");
  pipe.on("end", stop);
  pipe.on("error", stop);
  pipe.resume();
  pipe.unref();
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) throw unknownChoiceError("command", name, Object.keys(COMMANDS), "Run `platform --help` for the list.");
  const args = parseCommandArgs(command, rest);
  if (args.values.help) {
    process.stdout.write(formatHelp(command));
    return 0;
  }
  return (await command.run(args)) ?? 0;
}

stopWhenWrapperDies();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const message = error instanceof CliError ? error.message : error instanceof Error ? error.message : String(error);
    // Our own messages are whole (a build error's code frame); others' first line is the summary.
    const line = error instanceof CliError ? message : message.split("\n")[0];
    console.error(error instanceof CliError && error.bare ? line : `platform: ${line}`);
    if (!(error instanceof CliError) && process.env.PLATFORM_DEBUG) console.error(error);
    process.exit(error instanceof CliError ? error.exitCode : 1);
  },
);
