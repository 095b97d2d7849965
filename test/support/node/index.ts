// The one fixture module of the Node tests: event logs, clocks and gates for the engine; a deploy environment.
export * from "./deployEnvironment.ts";
export * from "./workflowLog.ts";
