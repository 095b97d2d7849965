import type { StrandedRuns } from "../../../contracts/workflowShapes.ts";

/**
 * The refused push's table of stranded runs: a header (run, workflow, step)
 * over columns padded to their widest cell, so it lines up with run ids of
 * any length; then how many more there are beyond those listed.
 */
export function strandedRunsTable(stranded: StrandedRuns): string[] {
  const rows = stranded.runs.map((run) => [
    run.runId,
    run.workflow,
    run.step,
    run.missing === "workflow" ? `(workflow "${run.workflow}" is gone)` : `(step "${run.step}" is gone)`,
  ]);
  const header = ["run", "workflow", "step", ""];
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    `  ${cells.map((cell, column) => cell.padEnd(widths[column]!)).join("  ")}`.trimEnd();
  const lines = [line(header), ...rows.map(line)];
  if (stranded.count > stranded.runs.length) lines.push(`  … and ${stranded.count - stranded.runs.length} more`);
  return lines;
}
