import { describe, expect, it } from "vitest";
import { devCommand } from "#src/dev/cli/commands/dev.ts";

describe("platform dev: options that need workerd", () => {
  it.each([
    ["--platform-frames", { "platform-frames": true }],
    ["--public", { public: true }],
  ])("%s with --node is refused (exit 2), naming what to leave out", async (_flag, values) => {
    await expect(
      devCommand.run({ positionals: ["/nonexistent/app"], values: { node: true, ...values } }),
    ).rejects.toMatchObject({
      message: "--login oidc, --private, --public and --platform-frames run in workerd; leave out --node.",
      exitCode: 2,
    });
  });
});
