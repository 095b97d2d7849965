import { describe, expect, it } from "vitest";
import {
  d1IdFromList,
  dispatchNamespaceIdFromList,
  ensureResource,
  platformResources,
  queueIdFromList,
  ResourceNotFound,
} from "#src/dev/cli/deploy/cloudflareResources.ts";
import { readPlatformWorkerConfigs } from "#src/dev/cli/deploy/platformWorkerConfigs.ts";
import type { Wrangler } from "#src/dev/cli/deploy/wranglerRunner.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const D1_ID = "5f0d1c4e-8b1a-4d6e-9f3a-2c7b8e9d0a1b";
const QUEUE_ID = "0123456789abcdef0123456789abcdef";
const NAMESPACE_ID = "9a8b7c6d-1234-4e5f-8a9b-0c1d2e3f4a5b";

// The shapes wrangler 4.155 prints: `d1 list --json`, the `queues list` table, `dispatch-namespace list` (Node's inspect).
const d1List = JSON.stringify([
  { uuid: "other", name: "platform-old", created_at: "2026-01-01" },
  { uuid: D1_ID, name: "platform", created_at: "2026-01-02", version: "production" },
]);
const queueTable = `┌──────────────────────────────────┬──────────────────┬─────────────┐
│ id                               │ name             │ created_on  │
├──────────────────────────────────┼──────────────────┼─────────────┤
│ ffffffffffffffffffffffffffffffff │ workflow-exec    │ 2026-01-01  │
├──────────────────────────────────┼──────────────────┼─────────────┤
│ ${QUEUE_ID} │ workflow-execute │ 2026-01-01  │
└──────────────────────────────────┴──────────────────┴─────────────┘`;
const namespaceList = `[
  {
    namespace_id: 'aaaaaaaa-0000-0000-0000-000000000000',
    namespace_name: 'platform-projects-staging',
    script_count: 0
  },
  {
    namespace_id: '${NAMESPACE_ID}',
    namespace_name: 'platform-projects',
    created_on: '2026-01-01T00:00:00.000Z',
    script_count: 3
  }
]`;

describe("reading ids back from wrangler's output", () => {
  it.each([
    ["d1 list --json", d1IdFromList, d1List, "platform", D1_ID],
    ["d1 list --json, absent", d1IdFromList, "[]", "platform", undefined],
    ["d1 list --json after a warning line", d1IdFromList, `▲ [WARNING] something\n${d1List}`, "platform", D1_ID],
    ["queues list", queueIdFromList, queueTable, "workflow-execute", QUEUE_ID],
    ["queues list, a prefix is not a match", queueIdFromList, queueTable, "workflow", undefined],
    ["dispatch-namespace list", dispatchNamespaceIdFromList, namespaceList, "platform-projects", NAMESPACE_ID],
    ["dispatch-namespace list, absent", dispatchNamespaceIdFromList, "[]", "platform-projects", undefined],
  ])("%s", (_case, read, stdout, name, id) => {
    expect(read(stdout, name)).toBe(id);
  });
});

/** A stand-in for wrangler with an account: answers list commands from `state`, records every call. */
function fakeAccount(state: { d1: boolean }, options: { createFails?: boolean } = {}) {
  const calls: string[] = [];
  const wrangler: Wrangler = async (args) => {
    calls.push(args.join(" "));
    if (args[0] === "d1" && args[1] === "list") return { stdout: state.d1 ? d1List : "[]", stderr: "" };
    if (args[0] === "d1" && args[1] === "create") {
      if (!options.createFails) state.d1 = true;
      return { stdout: "✅ Successfully created DB 'platform'", stderr: "" };
    }
    throw new Error(`unexpected: ${args.join(" ")}`);
  };
  return { wrangler, calls };
}

describe("ensureResource", () => {
  const d1 = { kind: "d1" as const, name: "platform", boundBy: ["platform-api"] };

  it("reuses an existing resource without creating anything", async () => {
    const { wrangler, calls } = fakeAccount({ d1: true });
    expect(await ensureResource(wrangler, d1)).toEqual({ ...d1, id: D1_ID, created: false });
    expect(calls).toEqual(["d1 list --json"]);
  });

  it("creates a missing resource and reads its id back", async () => {
    const { wrangler, calls } = fakeAccount({ d1: false });
    expect(await ensureResource(wrangler, d1)).toEqual({ ...d1, id: D1_ID, created: true });
    expect(calls).toEqual(["d1 list --json", "d1 create platform", "d1 list --json"]);
  });

  it("fails clearly when a created resource is not listed", async () => {
    const { wrangler } = fakeAccount({ d1: false }, { createFails: true });
    await expect(ensureResource(wrangler, d1)).rejects.toBeInstanceOf(ResourceNotFound);
  });
});

describe("platformResources", () => {
  it("finds the D1 database, the queue and the dispatch namespace the configs bind", () => {
    expect(platformResources(readPlatformWorkerConfigs(REPO_ROOT)).map((r) => [r.kind, r.name])).toEqual([
      ["d1", "platform"],
      ["queue", "workflow-execute"],
      ["dispatch-namespace", "platform-projects"],
    ]);
  });
});
