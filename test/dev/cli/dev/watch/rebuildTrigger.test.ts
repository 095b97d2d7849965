import path from "node:path";
import { describe, expect, it } from "vitest";
import { triggersRebuild } from "#src/dev/cli/dev/watch/rebuildTrigger.ts";

const project = path.resolve("/work/app");
const inputs = ["src/index.ts", "src/orders/charge.ts"].map((file) => path.join(project, file));

describe("which changes rebuild under platform dev", () => {
  it.each<[string, string, { inputs: string[] | null; failed: boolean }, boolean]>([
    ["a source the bundle holds", "src/index.ts", { inputs, failed: false }, true],
    ["a module it imports", path.join("src", "orders", "charge.ts"), { inputs, failed: false }, true],
    ["the project's variables", ".dev.vars", { inputs, failed: false }, true],
    ["package.json (what resolves)", "package.json", { inputs, failed: false }, true],
    ["tsconfig.json (what resolves)", "tsconfig.json", { inputs, failed: false }, true],
    ["a test", "test/index.test.ts", { inputs, failed: false }, false],
    ["a NOTES.md", "NOTES.md", { inputs, failed: false }, false],
    ["a source nothing imports yet", "src/draft.ts", { inputs, failed: false }, false],
    ["a folder the platform writes", ".platform-local/state/db.sqlite", { inputs, failed: false }, false],
    [
      "anything while the last build failed (it may be the missing import)",
      "src/draft.ts",
      { inputs, failed: true },
      true,
    ],
    ["anything before a first build", "NOTES.md", { inputs: null, failed: false }, true],
  ])("%s (%s): %s", (_name, changed, last, expected) => {
    expect(triggersRebuild(project, changed, last)).toBe(expected);
  });
});
