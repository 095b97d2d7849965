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
} from "./workflowApi.ts";
export type {
  WorkflowBackend,
  WorkflowRun,
  StartedRun,
  WorkflowFunction,
  WorkflowListFilter,
  CronRegistrar,
} from "./workflowApi.ts";
export { NonRetryableError, isNonRetryableError } from "./nonRetryableError.ts";
export { RetryAfterError, retryAfterMSOf, MAX_RETRY_AFTER_MS } from "./retryAfterError.ts";
export type { StepContext, StepResult, StepFunction } from "./stepContext.ts";
export type { RollbackContext, RollbackFailure, RollbackFunction } from "./rollbackContext.ts";

// The clock the engine and its hosts read.
export { systemClock } from "./clock.ts";
export type { Clock } from "./clock.ts";

// Definitions and defaults.
export { defineWorkflow, stepNamed, WORKFLOW_DEFAULTS, WORKFLOW_LIMITS, FIRST_STEP } from "./definition.ts";
export type { WorkflowDefinition, WorkflowOptions, WorkflowSteps } from "./definition.ts";
export { retryDelayMS, retryAt, jitterUnit } from "./backoff.ts";
export type { BackoffOptions, RetryKey } from "./backoff.ts";

// Events, JSON rule and limits.
export {
  WORKFLOW_EVENT_TYPES,
  START_DATA_KEY,
  isTerminalEvent,
  isControlEvent,
  isWorkflowEventType,
  nextEvent,
} from "./events.ts";
export type {
  RerunOf,
  StoredEvent,
  StoredEventOf,
  WorkflowEventType,
  WorkflowEventPayloads,
  WorkflowFailureCause,
  Writes,
} from "./events.ts";
export {
  toJsonValue,
  freezeJson,
  encodePayload,
  utf8ByteLength,
  MAX_EVENT_PAYLOAD_BYTES,
  MAX_JSON_DEPTH,
} from "./json.ts";
export type { JsonValue, JsonObject } from "./json.ts";

// Engine pieces for backends.
export { resolveNextAction } from "./resolveNextAction.ts";
export { createInbox, lastStateEvent, isPausedAfter } from "./receivedEvents.ts";
export type { Inbox, QueuedEvent, DeliveredEvent } from "./receivedEvents.ts";
export {
  decodeContinuation,
  encodeContinuation,
  continuationOfReturn,
  startsAtOnce,
  readsInbox,
  checkEventName,
  MAX_WAIT_MS,
} from "./continuation.ts";
export type { Continuation, ContinuationKind, ContinuationFields, ContinuationRequest } from "./continuation.ts";
export { appendReceivedEvent, cancelRun, pauseRun, resumeRun } from "./runControl.ts";
export type { NextAction } from "./resolveNextAction.ts";
export { createScratchpad, createStepAttempt } from "./stepContext.ts";
export type { Scratchpad, StepAttempt } from "./stepContext.ts";
export { createRun } from "./createRun.ts";
export type { CreateRunOptions, CreatedRun } from "./createRun.ts";
export { executeRun } from "./executeRun.ts";
export type { ExecuteRunOptions, ExecuteRunResult } from "./executeRun.ts";
export { describeRun, outcomeOf, outcomeOfView } from "./describeRun.ts";
export type { WorkflowRunView, RunEventView } from "./describeRun.ts";
export { detectRecovery, recoverRun, failInterruptedStep, readRunTail } from "./recovery.ts";
export type { RecoveryReason, RecoveryInput, RecoveryOutcome, RunTail as RecoveryRunTail } from "./recovery.ts";
export {
  stepFailureEvents,
  abandonedAttemptEvents,
  reasonOf,
  TIMEOUT_REASON,
  INTERRUPTED_REASON,
  MAX_REASON_LENGTH,
  STEP_ERROR_LIMITS,
} from "./stepFailure.ts";

// Stores and local backends.
export * from "./runSummary.ts";
export { DEFAULT_RETENTION_MS } from "./store.ts";
export type {
  WorkflowEventStore,
  RunIndex,
  AppendResult,
  CreateRunResult,
  SeqTaken,
} from "./store.ts";
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
} from "./runQuery.ts";
export type { RunFilter, RunListQuery, RunListPage, ListCursor } from "./runQuery.ts";
export { MAX_BULK_RUNS, toBulkFilter, toBulkOptions } from "./bulkOperation.ts";
export type { BulkAction, BulkOptions, BulkOperation, BulkResult, BulkOperationLog } from "./bulkOperation.ts";
export { planRerun } from "./rerun.ts";
export type { RerunPlan } from "./rerun.ts";
export { findStrandedRuns, describeStrandedRuns, STRANDED_RUNS_LISTED } from "./strandedRuns.ts";
export { checkRunBatch, groupBatch, summaryChange, summaryOf } from "./appendRules.ts";
export type { RunTail } from "./appendRules.ts";
export { createMemoryEventStore } from "./memoryEventStore.ts";
export type { MemoryEventStore } from "./memoryEventStore.ts";
export { createLocalWorkflowBackend } from "./localBackend.ts";
export type { LocalWorkflowBackend, LocalWorkflowBackendOptions } from "./localBackend.ts";
export { createMemoryWorkflowBackend } from "./memoryBackend.ts";
export type { MemoryWorkflowBackend } from "./memoryBackend.ts";
