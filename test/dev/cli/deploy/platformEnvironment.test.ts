import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  environmentProblems,
  PLATFORM_SECRETS,
  requiredSettings,
  secretsOf,
  workerSecrets,
} from "#src/dev/cli/deploy/platformEnvironment.ts";
import { readPlatformWorkerConfigs } from "#src/dev/cli/deploy/platformWorkerConfigs.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";
import { COMPLETE_DEPLOY_ENV } from "#test/support/node/index.ts";

const workers = readPlatformWorkerConfigs(REPO_ROOT);

describe("the secrets each worker gets", () => {
  it.each([
    ["platform-api", ["ADMIN_TOKEN", "CLOUDFLARE_API_TOKEN", "SECRETS_ENCRYPTION_KEY"]],
    ["platform-login", ["OIDC_CLIENT_SECRET", "LOGIN_FLOW_SECRET"]],
    [
      "platform-plugin-chatserver",
      ["TOKEN_ENCRYPTION_KEY", "STATE_SECRET", "CHATSERVER_CLIENT_SECRET", "CHATSERVER_BOT_TOKEN"],
    ],
    [
      "platform-plugin-workspace",
      ["TOKEN_ENCRYPTION_KEY", "STATE_SECRET", "SLACK_CLIENT_SECRET", "SLACK_SIGNING_SECRET"],
    ],
    ["platform-plugin-email-send", ["EMAIL_API_KEY"]],
    ["platform-gateway", []],
  ])("%s: %j", (worker, secrets) => {
    expect(secretsOf([worker]).map((s) => s.secret)).toEqual(secrets);
  });

  it("names only secrets the worker's wrangler.toml or env.ts declares", () => {
    for (const worker of workers) {
      const dir = path.dirname(path.join(REPO_ROOT, worker.configPath));
      const envFile = worker.configPath === "wrangler.toml" ? "src/workers/api/env.ts" : path.join(dir, "env.ts");
      const declared = [worker.configPath, envFile, "src/plugins/kit/pluginEnv.ts"]
        .map((file) => {
          try {
            return readFileSync(path.resolve(REPO_ROOT, file), "utf8");
          } catch {
            return "";
          }
        })
        .join("\n");
      for (const { secret } of secretsOf([worker.name]))
        expect(declared, `${worker.name}: ${secret}`).toContain(secret);
    }
  });

  it("reads CLOUDFLARE_API_TOKEN for the API worker from its own variable, never from wrangler's token", () => {
    const values = workerSecrets(
      "platform-api",
      { ...COMPLETE_DEPLOY_ENV, CLOUDFLARE_API_TOKEN: "wrangler-deploy-token" },
      false,
    );
    expect(values.CLOUDFLARE_API_TOKEN).toBe("upload-token");
  });

  it("uses placeholders in a dry run, which uploads nothing", () => {
    expect(Object.values(workerSecrets("platform-login", COMPLETE_DEPLOY_ENV, true))).not.toContain("oidc-secret");
  });
});

describe("environmentProblems", () => {
  it("accepts a complete environment", () => {
    expect(environmentProblems(workers, COMPLETE_DEPLOY_ENV)).toEqual([]);
  });

  it("requires every placeholder var of the configs, and the account and domain", () => {
    expect(requiredSettings(workers).map((s) => s.envVar)).toEqual([
      "CLOUDFLARE_ACCOUNT_ID",
      "PLATFORM_DOMAIN",
      "CHATSERVER_APPLICATION_ID",
      "CHATSERVER_CLIENT_ID",
      "CHATSERVER_PUBLIC_KEY",
      "SLACK_CLIENT_ID",
      "OIDC_CLIENT_ID",
    ]);
  });

  it.each([
    ["ADMIN_TOKEN", undefined, "ADMIN_TOKEN is not set (platform-api)"],
    ["PROJECTS_UPLOAD_API_TOKEN", "", "PROJECTS_UPLOAD_API_TOKEN is not set (platform-api)"],
    ["OIDC_CLIENT_ID", undefined, "OIDC_CLIENT_ID is not set (platform-login)"],
    ["PLATFORM_DOMAIN", undefined, "PLATFORM_DOMAIN is not set"],
    ["LOGIN_FLOW_SECRET", "short", "LOGIN_FLOW_SECRET must be at least 32 characters (has 5)"],
    ["STATE_SECRET", "x".repeat(31), "STATE_SECRET must be at least 32 characters (has 31)"],
    ["TOKEN_ENCRYPTION_KEY", "0f".repeat(31), "TOKEN_ENCRYPTION_KEY must be 32 bytes"],
    ["TOKEN_ENCRYPTION_KEY", "not a key at all", "TOKEN_ENCRYPTION_KEY must be 32 bytes"],
    ["SECRETS_ENCRYPTION_KEY", undefined, "SECRETS_ENCRYPTION_KEY is not set (platform-api)"],
    ["SECRETS_ENCRYPTION_KEY", "0f".repeat(16), "SECRETS_ENCRYPTION_KEY must be 32 bytes"],
  ])("%s = %j → %s", (name, value, problem) => {
    const problems = environmentProblems(workers, { ...COMPLETE_DEPLOY_ENV, [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(problem);
  });

  it("accepts a base64 TOKEN_ENCRYPTION_KEY", () => {
    const key = Buffer.alloc(32, 7).toString("base64");
    expect(environmentProblems(workers, { ...COMPLETE_DEPLOY_ENV, TOKEN_ENCRYPTION_KEY: key })).toEqual([]);
  });

  it("lists every secret once", () => {
    const names = PLATFORM_SECRETS.map((s) => s.envVar);
    expect(new Set(names).size).toBe(names.length);
  });
});
