import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { parseSync } from "@swc/core";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");

/** Longer than this, and a function is split by concept into files of its own (issue 33.5). */
const MOST_LINES = 400;

/** The syntax nodes that are functions: declarations, expressions, arrows, methods, accessors, constructors. */
const FUNCTION_TYPES = new Set([
  "FunctionDeclaration",
  "FunctionExpression",
  "ArrowFunctionExpression",
  "ClassMethod",
  "PrivateMethod",
  "Constructor",
  "MethodProperty",
  "GetterProperty",
  "SetterProperty",
]);

interface SyntaxNode {
  type?: string;
  span?: { start: number; end: number };
  identifier?: { value?: string } | null;
  key?: { value?: string };
  id?: { value?: string };
  body?: unknown;
  [field: string]: unknown;
}

/**
 * `file name lines` of every function, method or arrow in `source` longer than {@link MOST_LINES}.
 * Parsed by swc (the TypeScript in devDependencies is the native compiler, without a JavaScript parser API).
 */
function longFunctions(file: string, source: string): string[] {
  // A leading `;` pins the parser's byte offsets to the file's: swc numbers spans from wherever its source map stands.
  const bytes = Buffer.from(`;${source}`);
  const module = parseSync(bytes.toString(), { syntax: "typescript", tsx: file.endsWith(".tsx") });
  const base = module.span.start;
  // Where each line ends, so a line number is a binary search rather than a count over the file.
  const newlines: number[] = [];
  bytes.forEach((byte, at) => {
    if (byte === 10) newlines.push(at);
  });
  const lineAt = (offset: number) => {
    let [low, high] = [0, newlines.length];
    while (low < high) {
      const middle = (low + high) >> 1;
      if (newlines[middle]! < offset - base) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const found: string[] = [];
  const visit = (node: unknown, boundTo: string | undefined): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item, boundTo);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const syntax = node as SyntaxNode;
    if (syntax.type && FUNCTION_TYPES.has(syntax.type) && syntax.span && syntax.body !== null) {
      const lines = lineAt(syntax.span.end) - lineAt(syntax.span.start) + 1;
      const name = syntax.identifier?.value ?? syntax.key?.value ?? boundTo ?? "(anonymous)";
      if (lines > MOST_LINES) found.push(`${file} ${name} ${lines}`);
    }
    // The name a function expression is bound to: `const f = () => …`, `{ f: () => … }`.
    const binding =
      syntax.type === "VariableDeclarator"
        ? syntax.id?.value
        : syntax.type === "KeyValueProperty"
          ? syntax.key?.value
          : undefined;
    for (const [field, child] of Object.entries(syntax)) if (field !== "span") visit(child, binding);
  };
  visit(module.body, undefined);
  return found;
}

function sourceFiles(): string[] {
  return execFileSync("git", ["ls-files", "src"], { cwd: repo, encoding: "utf8" })
    .trim()
    .split("\n")
    .filter((file) => /\.tsx?$/.test(file));
}

const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`).join("\n");

describe(`no function in src is longer than ${MOST_LINES} lines`, () => {
  it("none is", () => {
    expect(sourceFiles().flatMap((file) => longFunctions(file, readFileSync(path.join(repo, file), "utf8")))).toEqual(
      [],
    );
  });

  it.each<[string, string, string[]]>([
    ["a declaration at the limit", `export function f() {\n${body(MOST_LINES)}\n}`, []],
    ["a declaration over it", `export function f() {\n${body(MOST_LINES + 1)}\n}`, [`f.ts f ${MOST_LINES + 1}`]],
    ["an arrow bound to a name", `const g = () => {\n${body(MOST_LINES + 1)}\n};`, [`f.ts g ${MOST_LINES + 1}`]],
    [
      "a method, and the factory holding it",
      `export function make() {\n  return {\n    m() {\n${body(MOST_LINES + 1)}\n    },\n  };\n}`,
      [`f.ts make ${MOST_LINES + 5}`, `f.ts m ${MOST_LINES + 1}`],
    ],
    ["a signature without a body", "export function f(): void;", []],
    ["a class method", `class C {\n  m() {\n${body(MOST_LINES + 1)}\n  }\n}`, [`f.ts m ${MOST_LINES + 1}`]],
  ])("finds %s", (_name, source, found) => {
    expect(longFunctions("f.ts", source)).toEqual(found);
  });
});
