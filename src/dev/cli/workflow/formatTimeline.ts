import type { WorkflowRunView } from "../../../engine/describeRun.ts";
import type { RunSummary } from "../../../engine/store.ts";

function ms(value: number): string {
  return value >= 10_000 ? `${(value / 1000).toFixed(1)} s` : `${Math.round(value)} ms`;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map((r) =>
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}

/**
 * A run's events as a readable timeline: one line per event with the step,
 * the attempt, how long the attempt ran (on its completion or failure), how
 * long a retry waited (on the next start), and the failure reason.
 */
export function formatRunTimeline(run: WorkflowRunView): string {
  const rows: string[][] = [["seq", "at", "event", "step", "attempt", "duration", "detail"]];
  let startedAt: number | undefined;
  let failedAt: number | undefined;
  for (const event of run.events) {
    const offset = `+${ms(event.at - run.createdAt)}`;
    let step = "";
    let attempt = "";
    let duration = "";
    let detail = "";
    switch (event.type) {
      case "workflow_created":
        detail = `data ${JSON.stringify(event.payload.writes.data ?? null)}`;
        break;
      case "step_started":
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        if (failedAt !== undefined) detail = `retry after waiting ${ms(event.at - failedAt)}`;
        startedAt = event.at;
        failedAt = undefined;
        break;
      case "step_completed":
        step = event.payload.step;
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = event.payload.next_step ? `next: ${event.payload.next_step}` : "done";
        if (Object.keys(event.payload.writes).length)
          detail += `, wrote ${Object.keys(event.payload.writes).join(", ")}`;
        break;
      case "step_failed":
        step = event.payload.step;
        attempt = String(event.payload.attempt);
        duration = startedAt === undefined ? "" : ms(event.at - startedAt);
        detail = `${event.payload.reason} (${event.payload.retryable ? "will retry" : "not retried"})`;
        failedAt = event.at;
        break;
      case "workflow_completed":
        detail = `result ${JSON.stringify(event.payload.result)}`;
        break;
      case "workflow_failed":
        detail = `${event.payload.reason} (${event.payload.cause})`;
        break;
    }
    rows.push([String(event.seq), offset, event.type, step, attempt, duration, detail]);
  }
  const outcome =
    run.status === "completed"
      ? `completed in ${ms(run.updatedAt - run.createdAt)}`
      : run.status === "failed"
        ? `failed after ${ms(run.updatedAt - run.createdAt)}: ${run.error}`
        : `running for ${ms(run.updatedAt - run.createdAt)} so far`;
  const heading = `Run ${run.id} of "${run.name}" (workflow id ${run.workflowId}), ${outcome}\nstarted ${new Date(run.createdAt).toISOString()}`;
  return `${heading}\n\n${table(rows)}\n`;
}

export function formatRunList(runs: RunSummary[]): string {
  if (runs.length === 0) return "No workflow runs match.\n";
  const rows = [["run id", "workflow", "status", "created", "updated"]];
  for (const run of runs) {
    rows.push([
      run.id,
      run.name,
      run.status,
      new Date(run.createdAt).toISOString(),
      new Date(run.updatedAt).toISOString(),
    ]);
  }
  return table(rows) + "\n";
}
