// The workflow engine core: plain TypeScript with no Cloudflare or Node
// imports, shared by the Durable Object backend, the node:sqlite backend and
// the in-memory backend.

// User-facing API (re-exported by the `platform` module).
export {
  workflow,
  installWorkflowBackend,
  installedWorkflowBackend,
  setCronRegistrar,
  getWorkflowDefinition,
  workflowDefinitions,
  resetWorkflowsForTests,
  WORKFLOW_RECOVERY_CRON,
  RESULT_POLL_INTERVAL_MS,
} from "./api/workflowApi.ts";
export type {
  WorkflowBackend,
  WorkflowRun,
  StartedRun,
  WorkflowFunction,
  WorkflowListFilter,
  CronRegistrar,
} from "./api/workflowApi.ts";
export { NonRetryableError, isNonRetryableError } from "./execution/nonRetryableError.ts";
export { RetryAfterError, retryAfterMSOf, MAX_RETRY_AFTER_MS } from "./execution/retryAfterError.ts";
export type { StepContext, StepResult, StepFunction } from "./execution/stepContext.ts";
export type { RollbackContext, RollbackFailure, RollbackFunction } from "./execution/rollbackContext.ts";

// The clock the engine and its hosts read.
export { systemClock } from "./api/clock.ts";
export type { Clock } from "./api/clock.ts";

// Definitions and defaults.
export { defineWorkflow, stepNamed, WORKFLOW_DEFAULTS, WORKFLOW_LIMITS, FIRST_STEP } from "./api/definition.ts";
export type { WorkflowDefinition, WorkflowOptions, WorkflowSteps } from "./api/definition.ts";
export { retryDelayMS, retryAt, jitterUnit } from "./execution/backoff.ts";
export type { BackoffOptions, RetryKey } from "./execution/backoff.ts";

// Events, JSON rule and limits.
export {
  WORKFLOW_EVENT_TYPES,
  START_DATA_KEY,
  isTerminalEvent,
  isControlEvent,
  isWorkflowEventType,
  nextEvent,
} from "./execution/events.ts";
export type {
  RerunOf,
  StoredEvent,
  StoredEventOf,
  WorkflowEventType,
  WorkflowEventPayloads,
  WorkflowFailureCause,
  Writes,
} from "./execution/events.ts";
export {
  toJsonValue,
  freezeJson,
  encodePayload,
  utf8ByteLength,
  MAX_EVENT_PAYLOAD_BYTES,
  MAX_JSON_DEPTH,
} from "./api/json.ts";
export type { JsonValue, JsonObject } from "./api/json.ts";

// Engine pieces for backends.
export { resolveNextAction } from "./execution/resolveNextAction.ts";
export { createInbox, lastStateEvent, isPausedAfter } from "./control/receivedEvents.ts";
export type { Inbox, QueuedEvent, DeliveredEvent } from "./control/receivedEvents.ts";
export {
  decodeContinuation,
  encodeContinuation,
  continuationOfReturn,
  startsAtOnce,
  readsInbox,
  checkEventName,
  MAX_WAIT_MS,
} from "./execution/continuation.ts";
export type { Continuation, ContinuationKind, ContinuationFields, ContinuationRequest } from "./execution/continuation.ts";
export { appendReceivedEvent, cancelRun, pauseRun, resumeRun } from "./control/runControl.ts";
export type { NextAction } from "./execution/resolveNextAction.ts";
export { createScratchpad, createStepAttempt } from "./execution/stepContext.ts";
export type { Scratchpad, StepAttempt } from "./execution/stepContext.ts";
export { createRun } from "./execution/createRun.ts";
export type { CreateRunOptions, CreatedRun } from "./execution/createRun.ts";
export { executeRun } from "./execution/executeRun.ts";
export type { ExecuteRunOptions, ExecuteRunResult } from "./execution/executeRun.ts";
export { describeRun, outcomeOf, outcomeOfView } from "./execution/describeRun.ts";
export type { WorkflowRunView, RunEventView } from "./execution/describeRun.ts";
export { detectRecovery, recoverRun, failInterruptedStep, readRunTail } from "./control/recovery.ts";
export type { RecoveryReason, RecoveryInput, RecoveryOutcome, RunTail as RecoveryRunTail } from "./control/recovery.ts";
export {
  stepFailureEvents,
  abandonedAttemptEvents,
  reasonOf,
  TIMEOUT_REASON,
  INTERRUPTED_REASON,
  MAX_REASON_LENGTH,
  STEP_ERROR_LIMITS,
} from "./execution/stepFailure.ts";

// Stores and local backends.
export * from "./execution/runSummary.ts";
export { DEFAULT_RETENTION_MS } from "./storage/store.ts";
export type {
  WorkflowEventStore,
  RunIndex,
  AppendResult,
  CreateRunResult,
  SeqTaken,
} from "./storage/store.ts";
export {
  toRunListQuery,
  toRunFilter,
  decodeListCursor,
  encodeListCursor,
  isEmptyFilter,
  matchesFilter,
  RUN_FILTER_FIELDS,
  DEFAULT_LIST_LIMIT,
  MAX_LIST_LIMIT,
} from "./storage/runQuery.ts";
export type { RunFilter, RunListQuery, RunListPage, ListCursor } from "./storage/runQuery.ts";
export { MAX_BULK_RUNS, toBulkFilter, toBulkOptions } from "./control/bulkOperation.ts";
export type { BulkAction, BulkOptions, BulkOperation, BulkResult, BulkOperationLog } from "./control/bulkOperation.ts";
export { planRerun } from "./control/rerun.ts";
export type { RerunPlan } from "./control/rerun.ts";
export { findStrandedRuns, describeStrandedRuns, STRANDED_RUNS_LISTED } from "./control/strandedRuns.ts";
export { checkRunBatch, groupBatch, summaryChange, summaryOf } from "./execution/appendRules.ts";
export type { RunTail } from "./execution/appendRules.ts";
export { createMemoryEventStore } from "./storage/memoryEventStore.ts";
export type { MemoryEventStore } from "./storage/memoryEventStore.ts";
export { createLocalWorkflowBackend } from "./backends/localBackend.ts";
export type { LocalWorkflowBackend, LocalWorkflowBackendOptions } from "./backends/localBackend.ts";
export { createMemoryWorkflowBackend } from "./backends/memoryBackend.ts";
export type { MemoryWorkflowBackend } from "./backends/memoryBackend.ts";
