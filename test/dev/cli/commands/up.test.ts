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

  it("--allow-outbound, repeated, names the host:port pairs every project may fetch", () => {
    expect(
      parseUpArgs({ "allow-outbound": ["127.0.0.1:5432", "[::1]:80", "DB.Example:6379"] }, { HOME: "/home/ada" }),
    ).toEqual({
      port: 8800,
      stateDir: "/home/ada/.local/state/platform/up",
      allowOutbound: ["127.0.0.1:5432", "[::1]:80", "db.example:6379"],
    });
  });

  it.each([
    "127.0.0.1",
    "127.0.0.1:0",
    "127.0.0.1:70000",
    "http://127.0.0.1:80",
    "127.0.0.1:80/x",
    "a@b:80",
    ":80",
    "",
  ])("refuses --allow-outbound %s, naming the form it takes", (value) => {
    expect(() => parseUpArgs({ "allow-outbound": [value] })).toThrow(
      expect.objectContaining({ exitCode: 2, message: expect.stringMatching(/^--allow-outbound/) }),
    );
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
