import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { scriptStarterService } from "./test/support/node/scriptStarterService.ts";
import { workerdPoolBindings } from "./test/support/node/workerdPoolOptions.ts";

// Tests mirror src/: the test of src/<path>/<file>.ts is test/<path>/<file>[.<aspect>].test.ts.
// Four projects: `workers` runs `*.workerd.test.ts` inside workerd (Durable Objects, D1, queues),
// `node` runs the other `*.test.ts` in plain Node (CLI, build, engine, Node backend), `e2e`
// (test/e2e) drives the real CLI and a browser against a running `platform dev`, and `long` holds the
// end-to-end scenarios that take minutes of real time (`npm run test:long`; `npm test` leaves it out).
const migrations = await readD1Migrations("./migrations");
// The D1 databases, actors and queue come from the API worker's wrangler.toml, as `platform dev` runs them.
const deployed = await workerdPoolBindings(import.meta.dirname);

export default defineConfig({
  test: {
    projects: [
      {
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
          name: "workers",
          include: ["test/**/*.workerd.test.ts"],
          setupFiles: ["./test/support/workerd/applyMigrations.ts"],
        },
      },
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
        // End-to-end: the real CLI, real workerd processes, real ports; one file at a time.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          exclude: ["test/e2e/**/*.long.e2e.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
      {
        // Scenarios that take minutes of real time (`*.long.e2e.test.ts`): `npm run test:long`, not `npm test`.
        test: {
          name: "long",
          include: ["test/e2e/**/*.long.e2e.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
