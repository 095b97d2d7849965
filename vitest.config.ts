import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Three projects: `workers` runs inside workerd (Durable Objects, D1, queues),
// `node` runs plain Node tests (CLI, build, Node backend), `e2e` drives the real
// CLI and a browser against a running `platform dev`.
const migrations = await readD1Migrations("./migrations");

export default defineConfig({
  test: {
    projects: [
      {
        plugins: [
          cloudflareTest({
            main: "./test/workers/harness.ts",
            miniflare: {
              compatibilityDate: "2026-10-30",
              compatibilityFlags: ["nodejs_compat"],
              d1Databases: ["DB"],
              durableObjects: {
                WORKFLOW_RUNS: { className: "WorkflowRun", useSQLite: true },
                WORKFLOW_RUN_INDEX: { className: "WorkflowRunIndex", useSQLite: true },
                RATE_LIMITER: { className: "RateLimiter", useSQLite: true },
                SESSION_CODES: { className: "SessionCode", useSQLite: true },
              },
              queueProducers: { WORKFLOW_QUEUE: { queueName: "workflow-execute" } },
              bindings: { TEST_MIGRATIONS: migrations, ADMIN_TOKEN: "test-admin-token", PLATFORM_DOMAIN: "example.test" },
            },
          }),
        ],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"], setupFiles: ["./test/workers/applyMigrations.ts"] },
      },
      {
        test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
      },
      {
        // End-to-end: the real CLI, real workerd processes, real ports; one file at a time.
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          environment: "node",
          testTimeout: 120_000,
          hookTimeout: 120_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
