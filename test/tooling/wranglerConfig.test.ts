import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const repo = path.resolve(import.meta.dirname, "../..");

// The deploy configurations must stay valid: wrangler builds each one as it would for `wrangler deploy`.
describe.each([
  [
    "API worker",
    "wrangler.toml",
    ["env.DB", "env.WORKFLOW_QUEUE", "env.DISPATCHER", "env.RATE_LIMITER", "env.SESSION_CODES"],
  ],
  ["gateway", "src/workers/gateway/wrangler.toml", ["env.DB", "env.DISPATCHER", "env.PLATFORM_DOMAIN"]],
  [
    "login worker",
    "src/workers/login/wrangler.toml",
    ["env.DB", "env.OIDC_ISSUER", "env.OIDC_CLIENT_ID", "env.LOGIN_PUBLIC_URL"],
  ],
  [
    "email-send plugin",
    "src/plugins/email-send/wrangler.toml",
    ["env.DB", "env.RATE_LIMITER", "env.EMAIL_API_BASE", "env.SENDER_DOMAIN"],
  ],
  [
    "chat-server plugin",
    "src/plugins/chatserver/wrangler.toml",
    [
      "env.DB",
      "env.RATE_LIMITER",
      "env.SESSION_CODES",
      "env.DISPATCHER",
      "env.CHATSERVER_BASE_URL",
      "env.CHATSERVER_PUBLIC_KEY",
    ],
  ],
])("%s wrangler config", (_name, config, bindings) => {
  it("builds with `wrangler deploy --dry-run` and declares its bindings", async () => {
    const outdir = mkdtempSync(path.join(tmpdir(), "wrangler-"));
    const { stdout } = await run(
      path.join(repo, "node_modules/.bin/wrangler"),
      ["deploy", "--dry-run", "-c", config, "--outdir", outdir],
      {
        cwd: repo,
        env: { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" },
      },
    );
    expect(stdout).toContain("--dry-run: exiting now.");
    for (const binding of bindings) expect(stdout).toContain(binding);
  }, 60_000);
});
