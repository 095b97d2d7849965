import { enableCompileCache } from "node:module";
import { Socket } from "node:net";
import { formatHelp, parseCommandArgs, CliError, type Command, unknownChoiceError } from "./commandLine.ts";
import { COMPILE_CACHE_DIR } from "./repoPaths.ts";

// Each command's module is imported only when it runs: `dev` and `up` bring Miniflare and esbuild, which a
// `platform workflow list` or `platform plugin trigger` does not need (seconds of start-up per call).
const COMMANDS: Record<string, () => Promise<Command>> = {
  init: async () => (await import("./commands/init.ts")).initCommand,
  dev: async () => (await import("./commands/dev.ts")).devCommand,
  up: async () => (await import("./commands/up.ts")).upCommand,
  console: async () => (await import("./commands/console.ts")).consoleCommand,
  login: async () => (await import("./commands/login.ts")).loginCommand,
  logout: async () => (await import("./commands/logout.ts")).logoutCommand,
  whoami: async () => (await import("./commands/whoami.ts")).whoamiCommand,
  push: async () => (await import("./commands/push.ts")).pushCommand,
  secret: async () => (await import("./commands/secret.ts")).secretCommand,
  logs: async () => (await import("./commands/logs.ts")).logsCommand,
  workflow: async () => (await import("./commands/workflow.ts")).workflowCommand,
  webhook: async () => (await import("./commands/webhook.ts")).webhookCommand,
  plugin: async () => (await import("./commands/plugin.ts")).pluginCommand,
  email: async () => (await import("./commands/email.ts")).emailCommand,
};

async function usage(): Promise<string> {
  const commands = await Promise.all(
    Object.entries(COMMANDS).map(async ([name, load]) => [name, await load()] as const),
  );
  const lines = commands.map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
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
    process.stdout.write(await usage());
    return name ? 0 : 2;
  }
  // Own keys only: `platform constructor` is an unknown command, not Object.prototype's.
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) throw unknownChoiceError("command", name, Object.keys(COMMANDS), "Run `platform --help` for the list.");
  const command = await load();
  const args = parseCommandArgs(command, rest);
  if (args.values.help) {
    process.stdout.write(formatHelp(command));
    return 0;
  }
  return (await command.run(args)) ?? 0;
}

// Every call loads the same modules: V8's compiled code, kept between calls, saves a quarter of a second of CPU
// on each `platform dev` start (a cache that cannot be written is passed by).
enableCompileCache(COMPILE_CACHE_DIR);
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
