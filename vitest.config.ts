import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

// Three projects: `workers` runs inside workerd (Durable Objects, D1, queues),
// `node` runs plain Node tests (CLI, build, Node backend), `e2e` drives the real
// CLI and a browser against a running `platform dev`.
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
            },
          }),
        ],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"] },
      },
      {
        test: { name: "node", include: ["test/node/**/*.test.ts"], environment: "node" },
      },
    ],
  },
});
