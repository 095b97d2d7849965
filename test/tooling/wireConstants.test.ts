import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_DURABLE_OBJECTS } from "#src/contracts/projectDurableObjects.ts";
import { COMPATIBILITY_DATE, COMPATIBILITY_FLAGS } from "#src/contracts/workerCompatibility.ts";

const repo = path.resolve(import.meta.dirname, "../..");
const wranglerConfigs = execFileSync("git", ["ls-files", "wrangler.toml", "**/wrangler.toml"], {
  cwd: repo,
  encoding: "utf8",
})
  .trim()
  .split("\n");

/** The top-level `compatibility_date` and `compatibility_flags` of a wrangler.toml. */
function compatibilityOf(toml: string): { date?: string; flags?: string[] } {
  const date = /^compatibility_date\s*=\s*"([^"]*)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  return {
    date,
    flags: flags
      ?.split(",")
      .map((flag) => flag.trim().replace(/^"|"$/g, ""))
      .filter(Boolean),
  };
}

/** The names `export { A as B } from …` lines give. */
function exportedNames(source: string): string[] {
  return [...source.matchAll(/^export \{ \w+ as (\w+) \}/gm)].map(([, name]) => name as string);
}

describe("wire constants have one definition that every side agrees with", () => {
  it("finds the platform's wrangler configs", () => {
    expect(wranglerConfigs).toContain("wrangler.toml");
    expect(wranglerConfigs.length).toBeGreaterThanOrEqual(6);
  });

  it.each(wranglerConfigs)("%s runs on the contracts' compatibility date and flags", (file) => {
    expect(compatibilityOf(readFileSync(path.join(repo, file), "utf8"))).toEqual({
      date: COMPATIBILITY_DATE,
      flags: [...COMPATIBILITY_FLAGS],
    });
  });

  it("src/objects/index.ts exports exactly the project Durable Object classes", () => {
    const exported = exportedNames(readFileSync(path.join(repo, "src/objects/index.ts"), "utf8"));
    expect(exported.sort()).toEqual(Object.keys(PROJECT_DURABLE_OBJECTS).sort());
  });

  // Each rule broken on purpose must be seen, so the checks above cannot quietly stop reading.
  it.each([
    [
      'compatibility_date = "2026-01-01"\ncompatibility_flags = ["nodejs_compat"]',
      { date: "2026-01-01", flags: ["nodejs_compat"] },
    ],
    ['compatibility_date = "2026-10-30"\ncompatibility_flags = []', { date: "2026-10-30", flags: [] }],
    ['name = "x"', { date: undefined, flags: undefined }],
  ])("reads a drifted config: %s", (toml, read) => {
    expect(compatibilityOf(toml)).toEqual(read);
    expect(read).not.toEqual({ date: COMPATIBILITY_DATE, flags: [...COMPATIBILITY_FLAGS] });
  });

  it("reads a class list that drifted", () => {
    expect(exportedNames('export { WorkflowRunActor as WorkflowRun } from "./WorkflowRun.ts";\n')).toEqual([
      "WorkflowRun",
    ]);
  });
});
