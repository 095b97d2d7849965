import { START_DATA_KEY } from "../../engine/execution/events.ts";
import type { WorkflowRunView } from "../../engine/execution/describeRun.ts";

/**
 * Who may answer an approval: a click reaches the project from anyone who can
 * see the message, and its customId says which run, not who may decide it.
 * The run names its approvers (provider user ids, which their owners cannot
 * change, unlike display names) and a handler checks the clicker against them
 * before it sends the decision; `chatserver.refuseNonApprover` and
 * `workspace.refuseNonApprover` do it in one line.
 */

/** The refusal a non-approver gets, privately. */
export const NOT_AN_APPROVER = "You are not one of the approvers of this request.";

/** Why `userId` may not answer, or null when it is one of `approvers`; a list that is not one of user ids refuses everyone. */
export function approverRefusal(userId: string | undefined, approvers: unknown): string | null {
  const valid = Array.isArray(approvers) && approvers.every((id) => typeof id === "string" && id !== "");
  if (!valid || userId === undefined || !approvers.includes(userId)) return NOT_AN_APPROVER;
  return null;
}

/**
 * The `approvers` of the run's start data (`workflow.start(name, { approvers: [...] })`); [] when it names none.
 * @example
 * const run = await workflow.get(runId);
 * if (run && (await chatserver.refuseNonApprover(click, runApprovers(run)))) return;
 */
export function runApprovers(run: Pick<WorkflowRunView, "events">): string[] {
  const created = run.events.find((event) => event.type === "workflow_created");
  const data = created?.type === "workflow_created" ? created.payload.writes[START_DATA_KEY] : undefined;
  const approvers = (data as { approvers?: unknown } | null | undefined)?.approvers;
  return Array.isArray(approvers) ? approvers.filter((id): id is string => typeof id === "string") : [];
}
