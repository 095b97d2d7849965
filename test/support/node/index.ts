// The fixture module of the Node-only tests: a deploy environment. Event logs, clocks and gates
// for the workflow engine are in #test/support/workflow (no Node or Cloudflare imports).
export * from "./deployEnvironment.ts";
