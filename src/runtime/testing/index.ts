// `platform/testing` (beyond the spec): run a project's workflows in a test, in this process,
// on the in-memory store with a virtual clock. Imported by tests only, never by worker code.
export { testWorkflow } from "./testWorkflow.ts";
export type { TestRun, TestWorkflowOptions } from "./testWorkflow.ts";
