/**
 * One behaviour, every backend: the same cases run against the in-memory
 * backend and the node:sqlite backend (test/runtime/node), and against the
 * Durable Object backend inside workerd (test/runtime/workflow). Everything
 * goes through the public `workflow` API. No Node or Cloudflare imports: only
 * vitest and the engine core.
 */
import { describeCallbackConformance } from "./callbackConformance.ts";
import { describeChildrenConformance } from "./childrenConformance.ts";
import { describeFlowControlConformance } from "./flowControlConformance.ts";
import { describePriorityFairnessConformance } from "./priorityFairnessConformance.ts";
import { describeRetryRulesConformance } from "./retryRulesConformance.ts";
import { describeRollbackConformance } from "./rollbackConformance.ts";
import { describeRunOperationsConformance } from "./runOperationsConformance.ts";
import { describeRunResultConformance } from "./runResultConformance.ts";
import { describeSendOrStartConformance } from "./sendOrStartConformance.ts";
import { describeStreamConformance } from "./streamConformance.ts";
import { describeWaitForRunConformance } from "./waitForRunConformance.ts";
import { describeBeyondSpecConformance } from "./workflowConformance.beyondSpec.ts";
import { describeCoreConformance } from "./workflowConformance.core.ts";
import type { MakeWorkflowBackend } from "./workflowConformance.fixture.ts";

export type { MakeWorkflowBackend, WorkflowBackendUnderTest } from "./workflowConformance.fixture.ts";

export function describeWorkflowConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describeCoreConformance(name, makeBackend);
  describeBeyondSpecConformance(name, makeBackend);
  describeRunOperationsConformance(name, makeBackend);
  describeFlowControlConformance(name, makeBackend);
  describeChildrenConformance(name, makeBackend);
  describeRetryRulesConformance(name, makeBackend);
  describeSendOrStartConformance(name, makeBackend);
  describePriorityFairnessConformance(name, makeBackend);
  describeRunResultConformance(name, makeBackend);
  describeWaitForRunConformance(name, makeBackend);
  describeRollbackConformance(name, makeBackend);
  describeStreamConformance(name, makeBackend);
  describeCallbackConformance(name, makeBackend);
}
