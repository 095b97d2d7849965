import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");

/** More positional parameters than this, and an exported function takes an options object instead. */
const MOST_POSITIONAL = 4;

/** `file name` of every exported function declaration in `source` and how many parameters it takes. */
function exportedArities(file: string, source: string): [string, number][] {
  const found: [string, number][] = [];
  for (const match of source.matchAll(/export (?:async )?function\*? (\w+)\s*(?:<[^(]*?>)?\(/g)) {
    let depth = 1;
    let count = 0;
    let current = "";
    for (let i = (match.index ?? 0) + match[0].length; depth > 0 && i < source.length; i++) {
      const c = source[i] as string;
      if ("([{<".includes(c)) depth++;
      else if (")]}".includes(c) || (c === ">" && source[i - 1] !== "=")) depth--;
      if (depth === 1 && c === ",") {
        if (current.trim()) count++;
        current = "";
      } else if (depth >= 1) current += c;
    }
    if (current.trim()) count++;
    found.push([`${file} ${match[1]}`, count]);
  }
  return found;
}

function sourceFiles(): string[] {
  return execFileSync("git", ["ls-files", "src"], { cwd: repo, encoding: "utf8" })
    .trim()
    .split("\n")
    .filter((file) => file.endsWith(".ts"));
}

describe("exported functions take at most four positional parameters, then an options object", () => {
  const long = sourceFiles()
    .flatMap((file) => exportedArities(file, readFileSync(path.join(repo, file), "utf8")))
    .filter(([, count]) => count > MOST_POSITIONAL)
    .map(([name]) => name);

  it("no exported function in src takes more", () => {
    expect(long).toEqual([]);
  });

  it.each<[string, string, [string, number][]]>([
    [
      "nine positional",
      "export async function upload(a: A, b: string, c: string[], d: { tag: string | null }, e = 1, f?: string, g?: string, h?: string, i: Readonly<Record<string, string>> = {}): Promise<void> {}",
      [["f.ts upload", 9]],
    ],
    [
      "an options object",
      "export function upload(target: T, upload: { a: string; b: number }): void {}",
      [["f.ts upload", 2]],
    ],
    [
      "a callback parameter",
      "export function each(a: A, f: (x: number, y: number) => boolean): void {}",
      [["f.ts each", 2]],
    ],
    ["a generic", "export function pick<K extends string, V>(a: Map<K, V>, b: K[]): V[] {}", [["f.ts pick", 2]]],
    ["no parameters", "export function none(): void {}", [["f.ts none", 0]]],
  ])("counts %s", (_name, source, arities) => {
    expect(exportedArities("f.ts", source)).toEqual(arities);
  });
});
