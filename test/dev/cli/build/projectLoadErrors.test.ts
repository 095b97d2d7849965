import { describe, expect, it } from "vitest";
import { nodeLoadFailure, ProjectLoadErrors, projectRelativeStack } from "#src/dev/cli/build/projectLoadErrors.ts";

// No source map at this path: positions stay as workerd printed them (the mapping has its own test).
const bundle = { bundlePath: "/nowhere/.platform/build/worker.js", projectDir: "/home/ada/shop" };
const RUNTIME_FAILED =
  "The Workers runtime failed to start. There was likely a problem with the workerd binary or your configuration.";
const UNCAUGHT = "service core:user:proj-shop: Uncaught SyntaxError: Unexpected token\n  at worker.js:37:19";

describe("ProjectLoadErrors: a top-level throw is the project's error, with its location", () => {
  it("from the log line workerd printed before Miniflare gave up", () => {
    const errors = new ProjectLoadErrors(() => bundle);
    expect(errors.present(UNCAUGHT)).toBe(UNCAUGHT);
    const failure = errors.loadFailure(new Error(RUNTIME_FAILED)) as Error;
    expect(failure.message).toBe(
      "The project threw while its module was loading (top-level code runs when the worker starts):\n" +
        "  SyntaxError: Unexpected token\n    at worker.js:37:19",
    );
  });

  it("from the runtime's stderr Miniflare quotes in its error", () => {
    const errors = new ProjectLoadErrors(() => bundle);
    const stderr = JSON.stringify({ level: "error", message: UNCAUGHT });
    const failure = errors.loadFailure(new Error(`${RUNTIME_FAILED}\nRuntime stderr:\n${stderr}`)) as Error;
    expect(failure.message).toContain("SyntaxError: Unexpected token\n    at worker.js:37:19");
  });

  it("a start failure with no project error is passed on unchanged, and a remembered throw is used once", () => {
    const errors = new ProjectLoadErrors(() => null);
    const other = new Error("Address already in use");
    expect(errors.loadFailure(other)).toBe(other);
    errors.present(UNCAUGHT);
    expect((errors.loadFailure(new Error(RUNTIME_FAILED)) as Error).message).toContain("SyntaxError");
    const again = new Error(RUNTIME_FAILED);
    expect(errors.loadFailure(again)).toBe(again);
  });

  it("other log lines are not taken for a top-level throw", () => {
    const errors = new ProjectLoadErrors(() => bundle);
    errors.present("Unhandled error in project worker: Error: boom");
    const failure = new Error(RUNTIME_FAILED);
    expect(errors.loadFailure(failure)).toBe(failure);
  });
});

describe("--node: the import's error with the project's files relative", () => {
  it.each([
    ["a file URL", "at file:///home/ada/shop/src/index.ts:4:21", "at src/index.ts:4:21"],
    ["a path", "at /home/ada/shop/src/index.ts:4:21", "at src/index.ts:4:21"],
    ["a neighbour folder's name stays", "at /home/ada/shopping/x.ts:1:1", "at /home/ada/shopping/x.ts:1:1"],
  ])("%s", (_label, stack, expected) => {
    expect(projectRelativeStack(stack, "/home/ada/shop")).toBe(expected);
  });

  it("nodeLoadFailure names the error and its stack", () => {
    const error = new SyntaxError("Unexpected token");
    error.stack = "SyntaxError: Unexpected token\n    at file:///home/ada/shop/src/index.ts:4:21";
    expect(nodeLoadFailure(error, "/home/ada/shop").message).toBe(
      "The project threw while its module was loading (top-level code runs when the project starts):\n" +
        "  SyntaxError: Unexpected token\n    at src/index.ts:4:21",
    );
  });
});
