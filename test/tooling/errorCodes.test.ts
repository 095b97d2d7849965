import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { httpStatusFor, type PlatformErrorCode } from "../../src/core/errors.ts";

const repo = path.resolve(import.meta.dirname, "../..");
const doc = readFileSync(path.join(repo, "docs/errors.md"), "utf8");

/** Every .ts file under src/, but the fake providers (they speak the providers' own codes, not the platform's). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full.endsWith(path.join("src", "dev", "fakes")) ? [] : sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The members of the `PlatformErrorCode` union in src/core/errors.ts. */
function unionCodes(errorsSource: string): string[] {
  const union = /export type PlatformErrorCode =([^;]+);/.exec(errorsSource)?.[1] ?? "";
  return [...union.matchAll(/"([a-z_0-9]+)"/g)].map((match) => match[1]!);
}

/** The codes a source text throws or returns as literals: `new PlatformError("x"` and `code: "x"`. */
function literalCodes(source: string): string[] {
  return [...source.matchAll(/new PlatformError\(\s*"([^"]+)"|\bcode: "([^"]+)"/g)].map(
    (match) => (match[1] ?? match[2])!,
  );
}

/** The first cell of each table row of docs/errors.md, when it is one code in backticks, with the row's cells. */
const documented = new Map(
  doc
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => line.split("|").map((cell) => cell.trim()))
    .map((cells) => [cells[1]!.replace(/`/g, ""), cells.slice(1, -1)] as const),
);

const codesInSource = [
  ...new Set([
    ...unionCodes(readFileSync(path.join(repo, "src/core/errors.ts"), "utf8")),
    ...sourceFiles(path.join(repo, "src")).flatMap((file) => literalCodes(readFileSync(file, "utf8"))),
  ]),
].sort();

describe("docs/errors.md: every error code the platform throws or returns", () => {
  it.each([
    ["a PlatformError", 'throw new PlatformError("not_found", "No run")', ["not_found"]],
    ["a PlatformError over two lines", 'new PlatformError(\n  "already_active",\n  `x`)', ["already_active"]],
    ["a problem's code", '{ code: "token_refused", cause }', ["token_refused"]],
    ["a code read, not made", 'if (error.code === "rate_limited")', []],
  ])("finds %s", (_case, source, codes) => {
    expect(literalCodes(source)).toEqual(codes);
  });

  it("finds the codes of src/ (the union and the literals)", () => {
    expect(codesInSource).toContain("invalid_input");
    expect(codesInSource).toContain("session_starts_used_up");
    expect(codesInSource.length).toBeGreaterThanOrEqual(20);
  });

  it.each(codesInSource)("documents %s", (code) => {
    expect(documented.has(code), `docs/errors.md has no row for \`${code}\``).toBe(true);
  });

  it.each(unionCodes(readFileSync(path.join(repo, "src/core/errors.ts"), "utf8")))(
    "gives %s the status httpStatusFor maps it to",
    (code) => {
      expect(documented.get(code)?.[1]).toBe(String(httpStatusFor(code as PlatformErrorCode)));
    },
  );

  it("documents no code src/ does not have", () => {
    const extra = [...documented.keys()].filter((code) => !codesInSource.includes(code) && code !== "close_<n>");
    expect(extra).toEqual([]);
  });
});
