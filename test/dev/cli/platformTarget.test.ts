import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { saveLogin } from "../../../src/dev/cli/credentials/credentialsFile.ts";
import { resolvePlatformApi } from "../../../src/dev/cli/platformTarget.ts";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "target-"));
  file = path.join(dir, "credentials.json");
  saveLogin("https://api.example.app", { token: "plt_stored", email: "ada@example.com" }, file);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("resolvePlatformApi", () => {
  it.each([
    ["the last login when nothing is named", undefined, {}, "https://api.example.app", "plt_stored", "login"],
    ["--api over the last login", "https://other.example.app/", {}, "https://other.example.app", null, null],
    [
      "$PLATFORM_API_URL when no --api",
      undefined,
      { PLATFORM_API_URL: "https://api.example.app/" },
      "https://api.example.app",
      "plt_stored",
      "login",
    ],
    [
      "$PLATFORM_TOKEN over the stored token",
      undefined,
      { PLATFORM_TOKEN: "plt_ci" },
      "https://api.example.app",
      "plt_ci",
      "PLATFORM_TOKEN",
    ],
    [
      "empty variables as unset",
      undefined,
      { PLATFORM_TOKEN: "", PLATFORM_API_URL: "" },
      "https://api.example.app",
      "plt_stored",
      "login",
    ],
  ] as const)("takes %s", (_name, api, env, apiUrl, token, source) => {
    expect(resolvePlatformApi(api, env, file)).toEqual({ apiUrl, token, source });
  });

  it("is null when no API is named anywhere", () => {
    expect(resolvePlatformApi(undefined, {}, path.join(dir, "none.json"))).toBeNull();
  });

  it("refuses a malformed --api with exit code 2", () => {
    expect(() => resolvePlatformApi("nope", {}, file)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});
