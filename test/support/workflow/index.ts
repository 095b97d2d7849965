// The fixtures of the workflow tests, free of Node and Cloudflare imports so that the engine's,
// the Node backend's and the actors' tests (in workerd) share them: event logs built by hand and
// read back as compact shapes, clocks and gates the test moves, typed rejections.
export * from "./activeRuns.ts";
export * from "./definitionOf.ts";
export * from "./eventLog.ts";
export * from "./keyedGates.ts";
export * from "./rejection.ts";
export * from "./progress.ts";
export * from "./runSummary.ts";
export * from "./wellFormedLog.ts";
