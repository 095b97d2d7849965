// `platform/testing`: run a project's workflows, requests and plugin handlers in a test, in this
// process: workflows on the in-memory store with a virtual clock, requests through the project
// worker's entry, handlers as the plugins deliver to them; plugin calls reach in-process fakes
// that record them. Imported by tests only, never by worker code.
export { testWorkflow } from "./testWorkflow.ts";
export type { TestWorkflowOptions } from "./testWorkflow.ts";
export { testRequest } from "./testRequest.ts";
export { TEST_ORIGIN } from "./testOrigin.ts";
export type { TestRequestInit, TestResponse, TestedProject } from "./testRequest.ts";
export { testPlugin } from "./testPlugin.ts";
export type { PluginAnswer, TestedPlugin, TestedPluginId, TestPluginUser } from "./testPlugin.ts";
export { TEST_PROJECT } from "./pluginFakes.ts";
export type { PluginCallRecord, PluginRecording, SentEmail, TestRun } from "./testRecords.ts";
