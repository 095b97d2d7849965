import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exportsWithoutExample } from "#test/support/e2e/index.ts";

// The checker the package test runs on the installed declarations, on hand-written ones: what it must
// find missing, and what it must accept.
const dir = mkdtempSync(path.join(tmpdir(), "platform-examples-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

writeFileSync(
  path.join(dir, "api.d.ts"),
  `import type { Registry } from "./registry.js";
/**
 * Documented.
 * @example
 * api.ok();
 */
export declare const api: {
    /**
     * @example
     * api.ok();
     */
    ok(): void;
    /** No example here. */
    bare(options?: { a: (x: number) => string }): void;
    readonly count: number;
};
/**
 * @example
 * registry.add("x");
 */
export declare const registry: Registry;
/**
 * @example
 * start("a");
 */
export declare function start(name: string): void;
/** The second overload has none. */
export declare function start(name: string, data: unknown): void;
/**
 * @example
 * const user: User = { email: "a@b.c" };
 */
export interface User {
    email: string;
}
export type Plain = string;
`,
);
writeFileSync(
  path.join(dir, "registry.d.ts"),
  `export interface Registry {
    /**
     * @example
     * registry.add("x");
     */
    add(name: string): void;
    remove(name: string): void;
    <T>(name: string): T;
}
`,
);
writeFileSync(
  path.join(dir, "index.d.ts"),
  `export { api, registry, start as begin, type User } from "./api.js";
export type { Plain } from "./api.js";
export { gone } from "./api.js";
`,
);

describe("exportsWithoutExample", () => {
  it("names every export, overload and method whose TSDoc lacks an @example, and nothing else", () => {
    expect(exportsWithoutExample(path.join(dir, "index.d.ts")).sort()).toEqual(
      ["api.bare", "begin", "Plain", "gone (no declaration found)", "registry.remove", "registry.(call)"].sort(),
    );
  });
});
