// The fixture module of the Node-only tests: a deploy environment and a CLI command's home. Event logs,
// clocks and gates for the workflow engine are in #test/support/workflow (no Node or Cloudflare imports).
export * from "./deployEnvironment.ts";
export * from "./cliHome.ts";
