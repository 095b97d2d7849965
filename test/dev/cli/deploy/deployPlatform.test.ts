import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PLUGINS, pluginWorkerName } from "#src/contracts/pluginRegistry.ts";
import { deployPlatform } from "#src/dev/cli/deploy/deployPlatform.ts";
import type { Wrangler } from "#src/dev/cli/deploy/wranglerRunner.ts";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";
import { COMPLETE_DEPLOY_ENV } from "#test/support/node/index.ts";

/**
 * The order the workers' bindings require (deployOrder.test.ts explains each rule): the API worker without its
 * plugin bindings, every plugin of the registry (src/plugins/<id>, by folder name), the API worker again, the rest.
 */
const PASSES = [
  "platform-api",
  ...PLUGINS.map(pluginWorkerName).sort(),
  "platform-api",
  "platform-login",
  "platform-gateway",
];

describe("npm run deploy -- --dry-run, for real", () => {
  const outDir = mkdtempSync(path.join(tmpdir(), "deploy-dry-run-"));
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it("builds every worker with wrangler, offline and with no account, and prints the plan", async () => {
    const lines: string[] = [];
    // Only PATH: no Cloudflare credential, no account id, none of the secrets.
    const report = await deployPlatform({
      repoRoot: REPO_ROOT,
      dryRun: true,
      env: { PATH: process.env.PATH },
      outDir,
      log: (line) => lines.push(line),
    });

    expect(report.builds.map((b) => b.worker)).toEqual(PASSES);
    for (const build of report.builds) {
      expect(existsSync(build.bundle), build.bundle).toBe(true);
      expect(build.bytes).toBeGreaterThan(1000);
    }
    expect(report.builds[0]?.omitServices).toEqual(["CHATSERVER_PLUGIN", "WORKSPACE_PLUGIN", "EMAIL_PLUGIN"]);
    expect(report.steps.map((s) => [s.kind, s.subject])).toEqual([
      ["check", "all"],
      ["resource", "platform"],
      ["resource", "workflow-execute"],
      ["resource", "platform-projects"],
      ["migrations", "platform"],
      ...PASSES.map((worker) => ["deploy", worker]),
    ]);
    expect(report.resources).toEqual([]);
    expect(report.problems.join("\n")).toContain("ADMIN_TOKEN is not set");
    expect(lines.join("\n")).toContain("Dry run complete");
    // Eight wrangler builds: a loaded 2-core machine needs minutes, not a bound on speed.
  }, 240_000);
});

/** A stand-in for wrangler with an account, recording each command and the files it was handed. */
function fakeWrangler() {
  const calls: string[] = [];
  const uploads: Array<{ config: Record<string, unknown>; secrets: Record<string, string> }> = [];
  const created = new Set<string>();
  const online: Wrangler = async (args) => {
    const command = args.filter((a) => !a.startsWith("/")).join(" ");
    calls.push(command);
    if (command === "d1 list --json")
      return { stdout: JSON.stringify(created.has("d1") ? [{ uuid: "d1-id", name: "platform" }] : []), stderr: "" };
    if (command === "queues list")
      return { stdout: "│ 0123456789abcdef0123456789abcdef │ workflow-execute │", stderr: "" };
    if (command === "dispatch-namespace list")
      return { stdout: "[ { namespace_id: 'ns-id', namespace_name: 'platform-projects' } ]", stderr: "" };
    if (command === "d1 create platform") created.add("d1");
    if (args[0] === "deploy") {
      const file = (flag: string) => JSON.parse(readFileSync(args[args.indexOf(flag) + 1]!, "utf8"));
      uploads.push({ config: file("-c"), secrets: file("--secrets-file") });
    }
    return { stdout: "", stderr: "" };
  };
  const offline: Wrangler = async (args) => {
    const outDir = args[args.indexOf("--outdir") + 1]!;
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, "index.js"), "x".repeat(2000));
    return { stdout: "--dry-run: exiting now.", stderr: "" };
  };
  return { calls, uploads, wrangler: { online, offline } };
}

describe("npm run deploy (against a stand-in for wrangler)", () => {
  it("creates or reuses the resources, migrates, then deploys each pass with its config and secrets", async () => {
    const fake = fakeWrangler();
    const report = await deployPlatform({
      repoRoot: REPO_ROOT,
      dryRun: false,
      env: COMPLETE_DEPLOY_ENV,
      log: () => {},
      wrangler: fake.wrangler,
    });

    expect(fake.calls).toEqual([
      "d1 list --json",
      "d1 create platform",
      "d1 list --json",
      "queues list",
      "dispatch-namespace list",
      "d1 migrations apply platform --remote -c",
      ...PASSES.map(() => "deploy -c --secrets-file"),
    ]);
    expect(report.resources.map((r) => [r.name, r.id, r.created])).toEqual([
      ["platform", "d1-id", true],
      ["workflow-execute", "0123456789abcdef0123456789abcdef", false],
      ["platform-projects", "ns-id", false],
    ]);
    expect(fake.uploads.map((u) => u.config.name)).toEqual(PASSES);
    for (const { config } of fake.uploads)
      expect((config.d1_databases as Array<{ database_id: string }>)[0]?.database_id).toBe("d1-id");
    const api = fake.uploads[PASSES.lastIndexOf("platform-api")]!;
    expect(api.secrets).toEqual({
      ADMIN_TOKEN: "a".repeat(32),
      CLOUDFLARE_API_TOKEN: "upload-token",
      SECRETS_ENCRYPTION_KEY: "5e".repeat(32),
    });
    expect((api.config.vars as Record<string, string>).LOGIN_PUBLIC_URL).toBe("https://login.apps.example.org");
    expect(fake.uploads[0]!.config.services).toEqual([]);
    expect(fake.uploads[PASSES.indexOf("platform-gateway")]!.secrets).toEqual({});
  });

  it("refuses before creating anything when the environment lacks a secret, naming it", async () => {
    const fake = fakeWrangler();
    const attempt = deployPlatform({
      repoRoot: REPO_ROOT,
      dryRun: false,
      env: { ...COMPLETE_DEPLOY_ENV, EMAIL_API_KEY: undefined, LOGIN_FLOW_SECRET: "too short" },
      log: () => {},
      wrangler: fake.wrangler,
    });
    await expect(attempt).rejects.toBeInstanceOf(CliError);
    await expect(attempt).rejects.toThrow(/LOGIN_FLOW_SECRET must be at least 32[\s\S]*EMAIL_API_KEY is not set/);
    expect(fake.calls).toEqual([]);
  });
});
