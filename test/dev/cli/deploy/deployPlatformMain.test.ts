import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { PLATFORM_SECRETS } from "#src/dev/cli/deploy/platformEnvironment.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";

const run = promisify(execFile);
const main = path.join(REPO_ROOT, "src/dev/cli/deploy/deployPlatformMain.ts");

describe("npm run deploy", () => {
  it("--help lists every environment variable the deploy reads", async () => {
    const { stdout } = await run(process.execPath, [main, "--help"], { cwd: REPO_ROOT });
    for (const name of [
      "CLOUDFLARE_API_TOKEN",
      "CLOUDFLARE_ACCOUNT_ID",
      "PLATFORM_DOMAIN",
      "OIDC_CLIENT_ID",
      ...PLATFORM_SECRETS.map((s) => s.envVar),
    ])
      expect(stdout).toContain(`  ${name}`);
  }, 30_000);

  it("without an environment, refuses with the list of what is missing and exit code 1", async () => {
    const failure = await run(process.execPath, [main], { cwd: REPO_ROOT, env: { PATH: process.env.PATH } }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stderr).toContain("nothing was created");
    expect(failure?.stderr).toContain("ADMIN_TOKEN is not set");
  }, 30_000);
});
