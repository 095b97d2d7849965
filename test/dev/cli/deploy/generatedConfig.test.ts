import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { generatedConfig } from "#src/dev/cli/deploy/generatedConfig.ts";
import { readPlatformWorkerConfigs } from "#src/dev/cli/deploy/platformWorkerConfigs.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const workers = readPlatformWorkerConfigs(REPO_ROOT);
const worker = (name: string) => workers.find((w) => w.name === name)!;
const D1_ID = "5f0d1c4e-8b1a-4d6e-9f3a-2c7b8e9d0a1b";

describe("generatedConfig", () => {
  const committed = readFileSync(path.join(REPO_ROOT, "wrangler.toml"), "utf8");
  const api = generatedConfig(worker("platform-api"), {
    repoRoot: REPO_ROOT,
    d1Ids: { platform: D1_ID },
    env: { PLATFORM_DOMAIN: "apps.example.org", CLOUDFLARE_ACCOUNT_ID: "acc123", UNRELATED: "x" },
    omitServices: ["EMAIL_PLUGIN"],
  });

  it.each([
    ["the D1 id is filled in", api.d1_databases?.[0]?.database_id, D1_ID],
    ["main is absolute", api.main, path.join(REPO_ROOT, "src/workers/api/index.ts")],
    ["the assets directory is absolute", api.assets?.directory, path.join(REPO_ROOT, "src/console/public")],
    ["the migrations directory is absolute", api.d1_databases?.[0]?.migrations_dir, path.join(REPO_ROOT, "migrations")],
    ["a var set in the environment replaces the placeholder", api.vars?.CLOUDFLARE_ACCOUNT_ID, "acc123"],
    [
      "PLATFORM_DOMAIN replaces the placeholder domain in vars",
      api.vars?.LOGIN_PUBLIC_URL,
      "https://login.apps.example.org",
    ],
    ["an environment variable that is no var is not added", api.vars?.UNRELATED, undefined],
    [
      "a first pass leaves out the omitted services",
      api.services?.map((s) => s.binding),
      ["CHATSERVER_PLUGIN", "WORKSPACE_PLUGIN"],
    ],
  ])("%s", (_case, actual, expected) => {
    expect(actual).toEqual(expected);
  });

  it("rewrites the routes and zones to PLATFORM_DOMAIN", () => {
    const gateway = generatedConfig(worker("platform-gateway"), {
      repoRoot: REPO_ROOT,
      d1Ids: {},
      env: { PLATFORM_DOMAIN: "apps.example.org" },
    });
    expect(gateway.routes).toEqual([
      { pattern: "*.apps.example.org/*", zone_name: "apps.example.org" },
      { pattern: "apps.example.org/*", zone_name: "apps.example.org" },
    ]);
  });

  it("leaves the committed wrangler.toml as it was", () => {
    expect(readFileSync(path.join(REPO_ROOT, "wrangler.toml"), "utf8")).toBe(committed);
    expect(worker("platform-api").raw.d1_databases?.[0]?.database_id).toBe("replace-with-your-d1-database-id");
  });
});
