import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");

// A path with at least one folder and a known extension, not part of a URL, an npm scope, a
// `$VAR/…` or `~/…` location or a dotted folder (`.platform/…`): those name places outside the tree.
const NAMED_PATH =
  /(?<![\w.@:/$~<>-])((?:[\w-]+\/)+[\w-]+(?:\.[\w-]+)*\.(?:ts|md|sql|toml|json|html|css|js|cjs|mjs))\b/g;

// Paths the docs name that are not files of this tree, each for a reason.
const NOT_IN_THE_TREE: Record<string, string> = {
  "test/index.test.ts": "the first test of a scaffolded project (src/dev/cli/init/scaffold.ts writes it)",
  "bench/results/latest.json": "written by `npm run bench`, ignored by git",
  "src/workers/api/x.ts": "the example file of an import-check error in docs/architecture.md",
  "dist/runtime/index.js": "inside the built package, not the repository",
};

interface NamedPath {
  file: string;
  line: number;
  named: string;
}

// Comments of TypeScript files (not `/// <reference …>` directives) and the whole of Markdown files:
// where prose names a file.
function prose(file: string, text: string): { line: number; text: string }[] {
  const lines = text.split("\n").map((line, index) => ({ line: index + 1, text: line.trim() }));
  if (file.endsWith(".md")) return lines;
  return lines.filter(({ text }) => /^(\/\/|\*|\/\*)/.test(text) && !text.startsWith("/// <reference"));
}

/** Every path named in prose that is neither a file of the tree (by its path or a tail of it) nor listed above. */
function missingNamedPaths(files: Record<string, string>, tree: readonly string[]): NamedPath[] {
  const missing: NamedPath[] = [];
  for (const [file, text] of Object.entries(files)) {
    for (const { line, text: said } of prose(file, text)) {
      for (const [, named = ""] of said.matchAll(NAMED_PATH)) {
        if (named.startsWith("node_modules/") || named in NOT_IN_THE_TREE) continue;
        const relative = path.posix.join(path.posix.dirname(file), named);
        if (tree.some((known) => known === named || known === relative || known.endsWith(`/${named}`))) continue;
        missing.push({ file, line, named });
      }
    }
  }
  return missing;
}

function trackedFiles(): string[] {
  return execFileSync("git", ["ls-files"], { cwd: repo, encoding: "utf8" }).trim().split("\n");
}

describe("paths named in comments and docs", () => {
  it("each names a file that exists", () => {
    const tree = trackedFiles();
    const prosePlaces = tree.filter(
      (file) => /^(src|test|bench|demo|docs)\/.*\.(ts|md)$/.test(file) || file === "README.md",
    );
    const files = Object.fromEntries(prosePlaces.map((file) => [file, readFileSync(path.join(repo, file), "utf8")]));
    expect(missingNamedPaths(files, tree)).toEqual([]);
  });

  // The rule broken on purpose: each row must be found, so the check above cannot quietly stop seeing paths.
  it.each([
    ["a moved file in a comment", "src/a.ts", "// see shared/uninstallPlugin.ts", "shared/uninstallPlugin.ts"],
    [
      "a deleted file in a doc",
      "docs/x.md",
      "The class lives in `src/objects/WorkflowRun.ts`.",
      "src/objects/WorkflowRun.ts",
    ],
    [
      "a test file that moved",
      "test/a.test.ts",
      " * (also test/platform/login/startRoute.test.ts)",
      "test/platform/login/startRoute.test.ts",
    ],
  ])("finds %s", (_, file, text, named) => {
    expect(missingNamedPaths({ [file]: text }, ["src/engine/storage/sqlEventStore.ts"])).toEqual([{ file, line: 1, named }]);
  });

  it.each([
    ["a full path", "// src/engine/storage/sqlEventStore.ts", "src/a.ts"],
    ["a tail of a path", "// (storage/sqlEventStore.ts)", "src/a.ts"],
    ["a path next to the file", "// sqlEventStore.ts", "src/engine/a.ts"],
    ["a URL", "// https://example.com/engine/missing.ts", "src/a.ts"],
    ["code, not a comment", 'const file = "src/missing.ts";', "src/a.ts"],
    ["a place outside the tree", "// $XDG_CONFIG_HOME/platform/credentials.json", "src/a.ts"],
  ])("accepts %s", (_, text, file) => {
    expect(missingNamedPaths({ [file]: text }, ["src/engine/storage/sqlEventStore.ts"])).toEqual([]);
  });
});

// Applied-migration tracking keys on the file name, so a deployed D1 has both 0013 files under their
// names: renaming either would re-apply it. That pair stays; no new number may repeat.
const DEPLOYED_REPEATS = new Set(["0013_project_cron_timezones.sql", "0013_project_secrets.sql"]);

function repeatedMigrationNumbers(names: readonly string[]): string[] {
  const byNumber = new Map<string, string[]>();
  for (const name of names) {
    const number = name.split("_")[0] ?? name;
    byNumber.set(number, [...(byNumber.get(number) ?? []), name]);
  }
  return [...byNumber.values()]
    .filter((named) => named.length > 1 && !named.every((name) => DEPLOYED_REPEATS.has(name)))
    .flat();
}

describe("migration numbers", () => {
  it("repeat only in the pair already deployed", () => {
    const names = trackedFiles()
      .filter((file) => file.startsWith("migrations/"))
      .map((file) => path.basename(file));
    expect(repeatedMigrationNumbers(names)).toEqual([]);
  });

  it.each([
    ["a third 0013", ["0013_project_cron_timezones.sql", "0013_project_secrets.sql", "0013_more.sql"]],
    ["a new repeat", ["0014_a.sql", "0014_b.sql"]],
  ])("refuses %s", (_, names) => {
    expect(repeatedMigrationNumbers(names).length).toBeGreaterThan(0);
  });
});
