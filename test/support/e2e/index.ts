// The one fixture module of the end-to-end tests: the real CLI, its processes, workflow projects and Chromium.
export * from "./browser.ts";
export * from "./cliProcess.ts";
export * from "./platformUp.ts";
export * from "./publicExamples.ts";
export * from "./workflowProjects.ts";
export * from "./workDir.ts";
// A run's events as the spec's sequences, as the engine's tests read them.
export { shape } from "#test/support/workflow/eventLog.ts";
