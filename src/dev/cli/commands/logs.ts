import { CliError, cliOptions, type Command } from "../commandLine.ts";
import { readDevSession, stateDirFor } from "../dev/state/devState.ts";
import { showProjectLog, timedLine } from "../logs/followProjectLog.ts";
import { printableLine } from "../../../console/public/console/printableLine.js";
import { type PlatformTarget, resolvePlatformApi, resolvePushedTarget } from "../platformTarget.ts";
import { projectFolder } from "../projectFolder.ts";

/**
 * Whose log: with --api or --slug, the pushed project; else the `platform
 * dev` running for --dir, else (when a platform is known from $PLATFORM_API_URL
 * or `platform login`) the project `platform push` deploys from --dir.
 */
function logTarget(values: Record<string, string | boolean | undefined>): PlatformTarget {
  if (values.api !== undefined || values.slug !== undefined) return resolvePushedTarget(values, "");
  const dir = projectFolder(values.dir as string | undefined);
  const session = readDevSession(stateDirFor(dir));
  if (session) return { apiUrl: session.apiUrl, token: session.cliToken, slug: session.slug };
  if (resolvePlatformApi(undefined)) return resolvePushedTarget(values, "");
  throw new CliError(
    `No \`platform dev\` is running for ${dir}, and no platform is named: start it, or pass --api URL (and --slug S).`,
  );
}

export const logsCommand: Command = {
  summary: "Print a project's log: its requests, console output, errors and workflow steps.",
  usage: "platform logs [--dir D | --slug S --api URL] [--follow] [--json] [--raw] [--platform-frames]",
  help: `
Prints the project's recent log, oldest first, each line with its time:
  GET /api/orders → 201 in 12 ms                  a request the project answered
  charging order 42                               what its code logged (console.*)
  error: Unhandled error in project worker: …     an error it logged, its stack beneath
  Uncaught TypeError: …                           an exception it did not catch
  run 3f2a9c1d: charge#1 failed in 3 ms: kaboom   a workflow step (run, step#attempt, outcome)
Stacks name the project's sources (src/index.ts:12:11), with the source map
of the version that runs; each run of the platform's own frames is one line,
\`… 3 platform frames\` (--platform-frames shows them). With --follow it then prints each new line as it
comes, until Ctrl-C; while the platform is unreachable, busy, or not started
yet (no \`platform dev\` for --dir), it says so in one line and waits, then
goes on from the last line it printed.

The project is the \`platform dev\` running for --dir (default: the current
directory); with --api URL (or --slug S) the pushed project \`platform push\`
deploys from --dir (or the one named --slug) on that platform, with the token
of \`platform login\` or $PLATFORM_TOKEN. Only the project's owner reads its
log, and it holds nothing of any other project. The platform keeps the newest
1,000 lines and errors of each project and, apart, 1,000 request lines.
--json prints one JSON object per line.
Control characters a line holds (a logged escape sequence) print as \\xNN, so
what a project logs cannot retitle or clear your terminal; --raw prints them
as logged.`,
  options: cliOptions({ strings: ["dir", "slug", "api"], booleans: ["follow", "json", "raw", "platform-frames"] }),
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    const follow = values.follow === true;
    // A named platform is resolved once (a wrong flag is said at once); a `platform dev` again for each read
    // after a failure: a follower waits for it to start or restart.
    const named = values.api !== undefined || values.slug !== undefined ? logTarget(values) : null;
    // Following ends with Ctrl-C: nothing to put away.
    for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(0));
    await showProjectLog(() => named ?? logTarget(values), {
      follow,
      platformFrames: values["platform-frames"] === true,
      note: (text) => console.error(text),
      print: (line) =>
        console.log(values.json ? JSON.stringify(line) : values.raw ? timedLine(line) : printableLine(timedLine(line))),
    });
    return 0;
  },
};
