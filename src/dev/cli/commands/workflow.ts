import type { WorkflowRunView } from "../../../engine/describeRun.ts";
import type { RunListPage } from "../../../engine/store.ts";
import { CliError, type Command } from "../commandLine.ts";
import { callPlatformApi, resolvePlatformTarget } from "../platformTarget.ts";
import { formatRunList, formatRunTimeline } from "../workflow/formatTimeline.ts";

export const workflowCommand: Command = {
  summary: "Inspect a project's workflow runs.",
  usage:
    "platform workflow list [--status s] [--name n] [--limit N] [--cursor c] | platform workflow get <runId>   [--dir d] [--api URL] [--json]",
  help: `
list   runs newest first; filter with --status (running|completed|failed) and
       --name; page with --limit and the --cursor it prints
get    one run's events as a timeline: step, attempt, duration, failure reason

Targets the \`platform dev\` running for --dir (default: the current
directory), or --api URL with $PLATFORM_TOKEN. --json prints the raw answer.`,
  options: {
    status: { type: "string" },
    name: { type: "string" },
    limit: { type: "string" },
    cursor: { type: "string" },
    dir: { type: "string" },
    api: { type: "string" },
    json: { type: "boolean" },
  },
  async run({ positionals, values }) {
    const [action, runId, ...extra] = positionals;
    if (extra.length) throw new CliError(`Unexpected arguments: ${extra.join(" ")}`, 2);
    const target = resolvePlatformTarget(values);
    if (action === "list") {
      if (runId) throw new CliError("platform workflow list takes no run id.", 2);
      const query = new URLSearchParams();
      for (const key of ["status", "name", "limit", "cursor"] as const) {
        if (typeof values[key] === "string") query.set(key, values[key] as string);
      }
      const page = await callPlatformApi<RunListPage>(
        target,
        "GET",
        `/projects/${target.slug}/workflows${query.size ? "?" + query : ""}`,
      );
      if (values.json) return void console.log(JSON.stringify(page, null, 2));
      process.stdout.write(formatRunList(page.runs));
      if (page.cursor) console.log(`More: platform workflow list --cursor ${page.cursor}`);
      return;
    }
    if (action === "get") {
      if (!runId) throw new CliError("platform workflow get needs a run id.", 2);
      const run = await callPlatformApi<WorkflowRunView>(
        target,
        "GET",
        `/projects/${target.slug}/workflows/${encodeURIComponent(runId)}`,
      );
      if (values.json) return void console.log(JSON.stringify(run, null, 2));
      process.stdout.write(formatRunTimeline(run));
      return;
    }
    throw new CliError(`Unknown workflow action "${action ?? ""}": use list or get.`, 2);
  },
};
