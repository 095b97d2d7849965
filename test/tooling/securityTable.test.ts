import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");
const doc = readFileSync(path.join(repo, "docs/security.md"), "utf8");

/** The "who authenticates how" table: each body row's cells. */
const rows = doc
  .split("\n")
  .filter((line) => line.startsWith("| ") && !line.startsWith("| caller"))
  .map((line) =>
    line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim()),
  );

/** `file` › "title" pairs of a "replayed in" cell (several separated by `;`, a file named once for its titles). */
function testsNamed(cell: string): { file: string; title: string }[] {
  const named: { file: string; title: string }[] = [];
  let file = "";
  for (const match of cell.matchAll(/(?:`(test\/[^`]+)` › )?"([^"]+)"/g)) {
    file = match[1] ?? file;
    named.push({ file, title: match[2]! });
  }
  return named;
}

describe("docs/security.md: every row of who authenticates how is replayed in a test", () => {
  it("has the rows, each with five cells", () => {
    expect(rows.length).toBeGreaterThanOrEqual(10);
    for (const row of rows) expect(row, row[0]).toHaveLength(5);
  });

  it.each(rows.map((row) => [row[0]!, row[4]!]))("%s: names tests that exist", (_row, cell) => {
    const named = testsNamed(cell);
    expect(named.length, cell).toBeGreaterThan(0);
    for (const { file, title } of named) {
      expect(existsSync(path.join(repo, file)), file).toBe(true);
      expect(readFileSync(path.join(repo, file), "utf8"), `${file} › ${title}`).toContain(title);
    }
  });
});
