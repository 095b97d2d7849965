// The `platform` module user code imports. Each capability lives in its own
// module and is tree-shaken away when a project does not use it.
export { PlatformError } from "../core/errors.ts";
export type { PlatformErrorCode } from "../core/errors.ts";
export type { PlatformEnv } from "./entry/platformEnv.ts";
export { workflow, NonRetryableError, RetryAfterError } from "./workflow/index.ts";
export { email, type EmailSendInput } from "./plugins/email.ts";
export { runApprovers } from "./plugins/approvers.ts";
export {
  workspace,
  type WorkspaceAction,
  type WorkspaceActionHandler,
  type WorkspaceEvent,
  type WorkspaceEventKind,
  type WorkspaceEventContext,
  type WorkspaceCallOptions,
  type WorkspaceMessageOptions,
  type WorkspaceViewHandler,
  type WorkspaceViewSubmission,
  type PostedMessage,
} from "./plugins/workspace.ts";
export {
  chatserver,
  type ChatButton,
  type ChatCommand,
  type ChatComponent,
  type ChatComponentInteraction,
  type ChatComponentMessage,
  type ChatComponents,
  type ChatEvent,
  type ChatEventKind,
  type ChatInteraction,
  type ChatMessageInput,
  type ChatModal,
  type ChatModalField,
  type ChatModalSubmit,
  type ChatReply,
  type ChatSelect,
  type ChatSelectOption,
  type ChatUser,
} from "./plugins/chatserver.ts";
export { webhook, type WebhookDecision, type WebhookOptions, type WebhookRouter } from "./webhooks/index.ts";
export { auth, type AuthOptions, type AuthUser, type AuthMiddleware } from "./auth/index.ts";
export type { WorkflowRun, WorkflowListFilter } from "../engine/api/workflowApi.ts";
export type { ScheduledStartData, WorkflowScheduleOption } from "../engine/api/workflowSchedule.ts";
export type { StepContext, StepResult } from "../engine/execution/stepContext.ts";
export type { RollbackContext, RollbackFailure, RollbackFunction } from "../engine/execution/rollbackContext.ts";
export type { AwaitedRun, ChildOutcome, ChildRequest } from "../engine/execution/continuation.ts";
export type { WorkflowRunView } from "../engine/execution/describeRun.ts";
export type { StreamMessage } from "../engine/streams/runStream.ts";
