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

  it("--max-live-runs sets the account's live-run budget", () => {
    expect(parseUpArgs({ "max-live-runs": "5" }, { HOME: "/home/ada" })).toEqual({
      port: 8800,
      stateDir: "/home/ada/.local/state/platform/up",
      maxLiveRunsPerAccount: 5,
    });
  });

  it.each([
    { port: "0" },
    { port: "70000" },
    { port: "http" },
    { state: "" },
    { "max-live-runs": "0" },
    { "max-live-runs": "-3" },
    { "max-live-runs": "1.5" },
    { "max-live-runs": "many" },
    { "max-live-runs": "" },
  ])("refuses %o", (values) => {
    expect(() => parseUpArgs(values)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });

  it("names the rule when --max-live-runs is not a whole number from 1", () => {
    expect(() => parseUpArgs({ "max-live-runs": "0" })).toThrow(
      '--max-live-runs must be a whole number from 1, got "0".',
    );
  });
});
