import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadOrCreateOperatorToken, OPERATOR_TOKEN_FILE } from "#src/dev/cli/up/operatorToken.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const stateDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "operator-token-"));
  dirs.push(dir);
  return dir;
};

describe("loadOrCreateOperatorToken", () => {
  it("creates a 256-bit token readable by its owner only, and keeps it across starts", () => {
    const dir = stateDir();
    const token = loadOrCreateOperatorToken(dir);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const file = path.join(dir, OPERATOR_TOKEN_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8").trim()).toBe(token);
    expect(loadOrCreateOperatorToken(dir)).toBe(token);
  });

  it.each([
    ["empty", ""],
    ["short", "abc"],
    ["not hex", "z".repeat(64)],
  ])("replaces a damaged (%s) token and tightens the file to 0600", (_, content) => {
    const dir = stateDir();
    writeFileSync(path.join(dir, OPERATOR_TOKEN_FILE), content, { mode: 0o644 });
    const token = loadOrCreateOperatorToken(dir);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path.join(dir, OPERATOR_TOKEN_FILE)).mode & 0o777).toBe(0o600);
  });
});
