import { afterAll } from "vitest";
import { forgetWorkflowRegistrations } from "#src/engine/api/workflowApi.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";

// The node and workers projects run their files in one module graph (`isolate: false`): what one file registered
// at top level (workflows, webhooks, chat handlers, auth settings) would still be there for the next.
// Runs after each file; the engine's registry too, for the files that use it without the runtime.
afterAll(() => {
  platformRuntime.forgetRegistrations();
  forgetWorkflowRegistrations();
});
