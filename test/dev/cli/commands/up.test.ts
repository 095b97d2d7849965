import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseUpArgs } from "#src/dev/cli/commands/up.ts";

describe("platform up arguments", () => {
  // State goes to the user's state folder, never the folder `platform up` was started from (usually a project).
  it.each([
    [{}, { XDG_STATE_HOME: "/home/ada/.state", HOME: "/home/ada" }, 8800, "/home/ada/.state/platform/up"],
    [{}, { HOME: "/home/ada" }, 8800, "/home/ada/.local/state/platform/up"],
    // A relative XDG_STATE_HOME is invalid by the XDG spec: ignored, as for the credentials' XDG_CONFIG_HOME.
    [{}, { XDG_STATE_HOME: "state", HOME: "/home/ada" }, 8800, "/home/ada/.local/state/platform/up"],
    [{ port: "8810", state: "/tmp/x" }, { HOME: "/home/ada" }, 8810, "/tmp/x"],
    [{ state: "rel" }, { HOME: "/home/ada" }, 8800, path.resolve("rel")],
  ])("%o with %o", (values, env, port, stateDir) => {
    expect(parseUpArgs(values, env)).toEqual({ port, stateDir });
  });

  it.each([{ port: "0" }, { port: "70000" }, { port: "http" }, { state: "" }])("refuses %o", (values) => {
    expect(() => parseUpArgs(values)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});
