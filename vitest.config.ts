import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { ConformanceFirstSequencer } from "./test/support/node/conformanceFirstSequencer.ts";
import { scriptStarterService } from "./test/support/node/scriptStarterService.ts";
import { workerdPoolBindings } from "./test/support/node/workerdPoolOptions.ts";

// Tests mirror src/: the test of src/<path>/<file>.ts is test/<path>/<file>[.<aspect>].test.ts.
// The projects: `workers` runs `*.workerd.test.ts` inside workerd (Durable Objects, D1, queues;
// `workers-isolated` the few that need a workerd of their own, `workers-long` the minute-long ones),
// `node` runs the other `*.test.ts` in plain Node (CLI, build, engine, Node backend), `e2e`
// (test/e2e) drives the real CLI and a browser against a running `platform dev`, and `long` holds the
// end-to-end scenarios that take minutes of real time (`npm run test:long` runs it and `workers-long`;
// `npm test` leaves both out).
const migrations = await readD1Migrations("./migrations");
// The D1 databases, actors and queue come from the API worker's wrangler.toml, as `platform dev` runs them.
const deployed = await workerdPoolBindings(import.meta.dirname);

export default defineConfig({
  test: {
    // One file more than cores (Vitest's default is one fewer): a file spends part of its time waiting on the
    // processes it drives (workerd, the CLI, Chromium), and the files beside it keep the cores busy meanwhile.
    maxWorkers: availableParallelism() + 1,
    sequence: { sequencer: ConformanceFirstSequencer },
    projects: [
      workersProject({
        name: "workers",
        include: ["test/**/*.workerd.test.ts"],
        exclude: ["test/**/*.isolated.workerd.test.ts", "test/**/*.long.workerd.test.ts"],
        // One workerd and module graph for all files, as the node project (a fresh one per file cost
        // ~5 s of start-up and imports each, over half the project's time); every test starts from
        // wiped storage, and what a file registered is forgotten after it.
        isolate: false,
      }),
      // A file that must import into a workerd of its own (what a module installs only by being imported).
      workersProject({ name: "workers-isolated", include: ["test/**/*.isolated.workerd.test.ts"], isolate: true }),
      // A minute or more of actors' work (the 200-seed fault search): `npm run test:long`, not `npm test`.
      workersProject({ name: "workers-long", include: ["test/**/*.long.workerd.test.ts"], isolate: false }),
      {
        // `platform` and `platform/testing` for the demo project's tests, as tsconfig.base.json maps them.
        resolve: { tsconfigPaths: true },
        test: {
          name: "node",
          // demo/test: the demo project's own tests, beside it as a user's would be.
          include: ["test/**/*.test.ts", "demo/test/**/*.test.ts"],
          exclude: ["test/**/*.workerd.test.ts", "test/e2e/**"],
          environment: "node",
          // One module graph for all files (no fresh worker and import per file); what a file
          // registered is forgotten after it.
          isolate: false,
          setupFiles: ["./test/support/forgetRegistrationsAfterEachFile.ts"],
        },
      },
      {
        // End-to-end: the real CLI, real workerd processes, real ports. Files run beside each other and
        // beside the other projects' files: each takes entry ports of its own, and a start's internal
        // ports are reserved machine-wide (src/dev/cli/dev/workerd/localPorts.ts).
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          exclude: ["test/e2e/**/*.long.e2e.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      {
        // End-to-end scenarios that take a minute or more of real time (`*.long.e2e.test.ts`: waits on the
        // clock, the packed package's installs): `npm run test:long`, not `npm test`.
        test: {
          name: "long",
          include: ["test/e2e/**/*.long.e2e.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});

/** A project whose files run inside workerd, with the API worker's bindings (see `deployed`). */
function workersProject(test: { name: string; include: string[]; exclude?: string[]; isolate: boolean }) {
  return {
    plugins: [
      cloudflareTest({
        main: "./test/support/workerd/harness.ts",
        miniflare: {
          ...deployed,
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            PLATFORM_DOMAIN: "example.test",
          },
          // The upload stand-in starts each script in a real workerd, which only Node can run.
          serviceBindings: { SCRIPT_STARTER: scriptStarterService },
        },
      }),
    ],
    test: {
      ...test,
      // Wiping after a file that made thousands of actors (the fault-injection files) wakes each first.
      hookTimeout: 60_000,
      setupFiles: ["./test/support/workerd/applyMigrations.ts", "./test/support/forgetRegistrationsAfterEachFile.ts"],
    },
  };
}
