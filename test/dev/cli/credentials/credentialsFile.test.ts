import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  credentialsPath,
  forgetLogin,
  normalizeApiUrl,
  readCredentials,
  saveLogin,
} from "#src/dev/cli/credentials/credentialsFile.ts";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "credentials-"));
  file = path.join(dir, "platform", "credentials.json");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("credentialsPath", () => {
  it.each([
    [{ XDG_CONFIG_HOME: "/x/config", HOME: "/home/ada" }, "/x/config/platform/credentials.json"],
    [{ HOME: "/home/ada" }, "/home/ada/.config/platform/credentials.json"],
    // A relative XDG_CONFIG_HOME is invalid by the XDG spec and ignored.
    [{ XDG_CONFIG_HOME: "relative", HOME: "/home/ada" }, "/home/ada/.config/platform/credentials.json"],
  ])("%o → %s", (env, expected) => {
    expect(credentialsPath(env)).toBe(expected);
  });
});

describe("normalizeApiUrl", () => {
  it.each([
    ["http://127.0.0.1:8800/", "http://127.0.0.1:8800"],
    ["HTTP://127.0.0.1:8800", "http://127.0.0.1:8800"],
    ["https://api.example.app/v1/", "https://api.example.app/v1"],
  ])("%s → %s", (input, expected) => expect(normalizeApiUrl(input)).toBe(expected));

  it.each(["not a url", "ftp://api.example.app"])("refuses %s", (input) => {
    expect(() => normalizeApiUrl(input)).toThrow(/URL/);
  });
});

describe("saveLogin / forgetLogin", () => {
  it("writes the file with mode 0600 in a 0700 folder, one entry per API URL, the last one current", () => {
    saveLogin("http://127.0.0.1:8800/", { token: "plt_a", email: "ada@example.com" }, file);
    saveLogin("https://api.example.app", { token: "plt_b", email: "ada@example.com" }, file);
    saveLogin("http://127.0.0.1:8800", { token: "plt_c", email: "bob@other.org" }, file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const saved = readCredentials(file);
    expect(saved.current).toBe("http://127.0.0.1:8800");
    expect(Object.keys(saved.logins).sort()).toEqual(["http://127.0.0.1:8800", "https://api.example.app"]);
    expect(saved.logins["http://127.0.0.1:8800"]).toMatchObject({ token: "plt_c", email: "bob@other.org" });
  });

  it("tightens a file someone left readable to 0600 on the next write", () => {
    saveLogin("https://api.example.app", { token: "plt_a", email: "a@example.com" }, file);
    rmSync(file);
    writeFileSync(file, JSON.stringify({ logins: {} }), { mode: 0o644 });
    saveLogin("https://api.example.app", { token: "plt_b", email: "a@example.com" }, file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("forgets one login and clears current only when it was that one", () => {
    saveLogin("https://one.example.app", { token: "plt_1", email: "a@example.com" }, file);
    saveLogin("https://two.example.app", { token: "plt_2", email: "a@example.com" }, file);
    expect(forgetLogin("https://one.example.app", file)).toBe(true);
    expect(readCredentials(file).current).toBe("https://two.example.app");
    expect(forgetLogin("https://two.example.app/", file)).toBe(true);
    expect(readCredentials(file)).toEqual({ logins: {} });
    expect(forgetLogin("https://two.example.app", file)).toBe(false);
  });

  it("reads a missing file as no logins", () => {
    expect(readCredentials(file)).toEqual({ logins: {} });
  });
});
