import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseUpArgs } from "#src/dev/cli/commands/up.ts";

describe("platform up arguments", () => {
  it.each([
    [{}, 8800, path.resolve(".platform-local")],
    [{ port: "8810", state: "/tmp/x" }, 8810, "/tmp/x"],
  ])("%o", (values, port, stateDir) => {
    expect(parseUpArgs(values)).toEqual({ port, stateDir });
  });

  it.each([{ port: "0" }, { port: "70000" }, { port: "http" }, { state: "" }])("refuses %o", (values) => {
    expect(() => parseUpArgs(values)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});
