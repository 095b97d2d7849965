import type * as esbuild from "esbuild";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { buildFailure, buildFailureFrom, fatalWarnings } from "#src/dev/cli/build/buildFailure.ts";
import { RUNTIME_DIR } from "#src/dev/cli/repoPaths.ts";
import { PlatformError } from "#src/core/errors.ts";

const projectDir = "/home/ada/shop";
const runtimeIndex = path.relative(projectDir, path.join(RUNTIME_DIR, "index.ts"));

function message(text: string, lineText: string, column: number, suggestion = "", length = 7): esbuild.Message {
  return {
    id: "",
    pluginName: "",
    text,
    location: { file: "src/index.ts", namespace: "", line: 3, column, length, lineText, suggestion },
    notes: [{ text: "the runtime's own line", location: null }],
    detail: undefined,
  };
}

describe("buildFailure: esbuild's errors with their code frame", () => {
  it("a syntax error: the message, file:line:col, the line and a caret", async () => {
    const error = await buildFailure(projectDir, [message('Expected ";" but found "y"', "const x y = 1;", 8, "", 1)]);
    expect(error).toBeInstanceOf(PlatformError);
    expect(error.code).toBe("build_failed");
    expect(error.message.split("\n")).toEqual([
      'Expected ";" but found "y"',
      "",
      "    src/index.ts:3:8:",
      "      3 │ const x y = 1;",
      "        ╵         ^",
      "",
      "  the runtime's own line",
    ]);
  });

  const missing: [label: string, text: string][] = [
    ["a named import", `No matching export in "${runtimeIndex}" for import "workflo"`],
    [
      "a namespace read",
      `Import "workflo" will always be undefined because there is no matching export in "${runtimeIndex}"`,
    ],
  ];
  it.each(missing)("a name platform does not export (%s) is named, with the suggestion", async (_label, text) => {
    const error = await buildFailure(projectDir, [message(text, 'import { workflo } from "platform";', 9, "workflow")]);
    expect(error.message.split("\n")[0]).toBe('"platform" has no export named "workflo" (did you mean "workflow"?)');
    expect(error.message).toContain("src/index.ts:3:9:");
    expect(error.message).not.toContain(runtimeIndex);
    expect(error.message).not.toContain("the runtime's own line");
  });

  it("a missing export of another module keeps esbuild's words", async () => {
    const text = 'No matching export in "src/util.ts" for import "helper"';
    const error = await buildFailure(projectDir, [message(text, 'import { helper } from "./util.ts";', 9)]);
    expect(error.message.split("\n")[0]).toBe(text);
  });
});

describe("fatalWarnings: only reads of names platform does not export fail the build", () => {
  it.each([
    [`Import "workflo" will always be undefined because there is no matching export in "${runtimeIndex}"`, 1],
    ['Import "x" will always be undefined because there is no matching export in "src/util.ts"', 0],
    ['"typeof" comparison with "undefined" is always false', 0],
  ] as const)("%s → %i", (text, count) => {
    expect(fatalWarnings(projectDir, [message(text, "", 1)])).toHaveLength(count);
  });
});

describe("buildFailureFrom: whatever the build threw, as build_failed", () => {
  it.each([
    ["a PlatformError stays", new PlatformError("build_failed", "No folder /x."), "No folder /x."],
    ["an Error's message", new Error("disk full"), "disk full"],
    ["a string", "odd", "odd"],
  ] as const)("%s", async (_label, thrown, text) => {
    const error = await buildFailureFrom(projectDir, thrown);
    expect([error.code, error.message]).toEqual(["build_failed", text]);
  });
});
