// The one fixture module of the Node tests: event logs, clocks and gates for the engine.
export * from "./workflowLog.ts";
