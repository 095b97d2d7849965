import { errorText, stepErrors } from "../../../console/public/console/stepErrorsView.js";
import type { WorkflowRunView } from "../../../engine/execution/describeRun.ts";

/**
 * What `workflow get` prints beneath a run's timeline: each failed attempt
 * that threw, with its error, the stack's frames (which the platform points
 * at the project's sources) and causes, in the console's words; nothing for
 * a run whose attempts never threw.
 */
export function formatFailedAttempts(run: WorkflowRunView): string {
  const thrown = stepErrors(run).filter((row) => row.error);
  if (thrown.length === 0) return "";
  const blocks = thrown.map(
    (row) =>
      `  ${row.step}#${row.attempt}\n${errorText(row.error!)
        .split("\n")
        .map((line) => `    ${line}`)
        .join("\n")}`,
  );
  return `\nFailed attempts:\n${blocks.join("\n")}\n`;
}
