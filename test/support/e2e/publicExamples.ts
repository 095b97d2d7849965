import { readFileSync } from "node:fs";
import path from "node:path";

/**
 * Which public exports of an installed package's declaration files lack an
 * `@example` in their TSDoc, as an editor's hover shows them: every name an
 * entry exports (followed through re-exports to its declaration), every
 * overload of an exported function, and every method of an exported value's
 * type (the methods of `workflow`, `auth`, `chatserver`, …). Read from the
 * emitted `.d.ts` text: TypeScript 7 has no compiler API to ask, and the
 * emitted shapes are few (`export declare const|function|class`, `export
 * interface|type`, `export { … } from`).
 */
export function exportsWithoutExample(entryFile: string): string[] {
  const missing: string[] = [];
  for (const name of exportedNames(entryFile)) {
    const found = declarationOf(entryFile, name);
    if (!found) {
      missing.push(`${name} (no declaration found)`);
      continue;
    }
    const { text, index, kind } = found;
    for (const at of kind === "function" ? allDeclarations(text, "function", found.name) : [index])
      if (!hasExampleBefore(text, at)) missing.push(name);
    if (kind === "const") {
      const members = membersOfValue(found.file, text, index);
      for (const member of members) if (!member.example) missing.push(`${name}.${member.name}`);
    }
  }
  return [...new Set(missing)];
}

type DeclarationKind = "const" | "function" | "class" | "interface" | "type";

interface Declaration {
  /** Its name where it is declared (an export may rename it). */
  name: string;
  file: string;
  text: string;
  index: number;
  kind: DeclarationKind;
}

/** The names an entry exports, values and types (`b as c` exports `c`). */
function exportedNames(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const names: string[] = [];
  for (const match of text.matchAll(/export (?:type )?\{([^}]*)\}/g))
    for (const part of (match[1] ?? "").split(",")) {
      const name = part
        .replace(/^\s*type\s+/, "")
        .trim()
        .split(/\s+as\s+/)
        .at(-1);
      if (name) names.push(name);
    }
  for (const match of text.matchAll(/export (?:declare )?(?:const|function|class|interface|type) (\w+)/g))
    names.push(match[1] as string);
  return names;
}

/** Where `name` is declared, following `export { name } from "./x.js"` chains. */
function declarationOf(file: string, name: string, seen = new Set<string>()): Declaration | null {
  if (seen.has(file)) return null;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const direct = new RegExp(`export (?:declare )?(const|function|class|interface|type) ${name}\\b`).exec(text);
  if (direct) return { name, file, text, index: direct.index, kind: direct[1] as DeclarationKind };
  for (const match of text.matchAll(/export (?:type )?\{([^}]*)\} from "([^"]+)"/g)) {
    for (const part of (match[1] ?? "").split(",")) {
      const [original, alias] = part
        .replace(/^\s*type\s+/, "")
        .trim()
        .split(/\s+as\s+/);
      if ((alias ?? original) !== name || !original) continue;
      return declarationOf(
        path.resolve(path.dirname(file), (match[2] as string).replace(/\.js$/, ".d.ts")),
        original,
        seen,
      );
    }
  }
  return null;
}

function allDeclarations(text: string, kind: string, name: string): number[] {
  return [...text.matchAll(new RegExp(`export (?:declare )?${kind} ${name}\\b`, "g"))].map((m) => m.index);
}

/** Whether the TSDoc block right before `index` (whitespace between) has an `@example`. */
function hasExampleBefore(text: string, index: number): boolean {
  const before = text.slice(0, index).trimEnd();
  if (!before.endsWith("*/")) return false;
  const start = before.lastIndexOf("/**");
  return start >= 0 && before.slice(start).includes("@example");
}

/**
 * The members of the type of `export declare const name: …` at `index`: an object type written there,
 * or an interface the file declares or imports.
 */
function membersOfValue(file: string, text: string, index: number): { name: string; example: boolean }[] {
  const header = /export declare const \w+: ([^;{]*)(\{|;)/.exec(text.slice(index));
  if (!header) return [];
  if (header[2] === "{") return membersIn(text, index + header.index + header[0].length);
  const typeName = (header[1] ?? "").trim();
  const local = new RegExp(`(?:export )?interface ${typeName}\\b[^{]*\\{`).exec(text);
  if (local) return membersIn(text, local.index + local[0].length);
  const imported = new RegExp(`import (?:type )?\\{[^}]*\\b${typeName}\\b[^}]*\\} from "([^"]+)"`).exec(text);
  if (!imported) return [];
  const target = path.resolve(path.dirname(file), (imported[1] as string).replace(/\.js$/, ".d.ts"));
  const targetText = readFileSync(target, "utf8");
  const declared = new RegExp(`export interface ${typeName}\\b[^{]*\\{`).exec(targetText);
  return declared ? membersIn(targetText, declared.index + declared[0].length) : [];
}

/**
 * The members of the braces opened just before `start`: each name (a call signature is `(call)`) and
 * whether its TSDoc has an example. Brackets inside comments do not count; `<`/`>` are not brackets here
 * (an arrow's `=>` would unbalance them).
 */
function membersIn(text: string, start: number): { name: string; example: boolean }[] {
  const members: { name: string; example: boolean }[] = [];
  let depth = 1;
  let inComment = false;
  let lineStart = start;
  let lineDepth = 1;
  for (let i = start; i < text.length && depth > 0; i++) {
    if (!inComment && text.startsWith("/*", i)) inComment = true;
    else if (inComment && text.startsWith("*/", i)) inComment = false;
    const char = text[i];
    if (!inComment) {
      if (char === "{" || char === "(" || char === "[") depth++;
      else if (char === "}" || char === ")" || char === "]") depth--;
    }
    if (char !== "\n") continue;
    const line = text.slice(lineStart, i);
    if (lineDepth === 1 && !inComment) {
      // Methods and call signatures: what a hover on `workflow.start` or `auth.require` shows.
      const member = /^\s*(\w+)\??\s*[(<]/.exec(line) ?? /^\s*([(<])/.exec(line);
      if (member) {
        const name = member[1] === "(" || member[1] === "<" ? "(call)" : (member[1] as string);
        members.push({ name, example: hasExampleBefore(text, lineStart) });
      }
    }
    lineStart = i + 1;
    lineDepth = depth;
  }
  return members;
}
