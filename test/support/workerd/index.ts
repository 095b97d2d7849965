// The one fixture module of the tests that run inside workerd: the API harness,
// the sign-in fixtures of a project and of the login worker, the plugins', timers on a clock tests move,
// and WorkflowRun actors read from outside.
export * from "./api.ts";
export * from "./auth.ts";
export * from "./chatServer.ts";
export * from "./deployTarget.ts";
export * from "./login.ts";
export * from "./manualTimers.ts";
export * from "./plugins.ts";
export * from "./scriptStarter.ts";
export * from "./workflowActors.ts";
