import { execFile } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { plainShellPath, systemNode } from "#test/support/e2e/cliProcess.ts";

const repo = path.resolve(import.meta.dirname, "../..");
const work = mkdtempSync(path.join(tmpdir(), "ci-install-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command in a copy of the repository's manifest and lockfile, from a plain shell (the machine's Node first). */
function inCopy(command: string, args: string[]): Promise<{ code: number; output: string }> {
  for (const file of ["package.json", "package-lock.json"]) copyFileSync(path.join(repo, file), path.join(work, file));
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: work, env: { HOME: process.env.HOME, PATH: plainShellPath() }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

const DRY_CI = ["ci", "--dry-run", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"];

// `.ci/run` installs with `.ci/install`: npm run by the Node 22 the repository pins, so every package's `engines`
// is checked against the Node its code runs on. The control: the same install with the machine's own npm warns
// EBADENGINE exactly when the machine's Node is older than the packages need (Node 20 here).
describe("the CI install", () => {
  it("checks engines against the repository's Node 22: no EBADENGINE", async () => {
    const ci = await inCopy("bash", [path.join(repo, ".ci/install"), ...DRY_CI]);
    expect(ci.code, ci.output).toBe(0);
    expect(ci.output).toMatch(/added \d+ packages/);
    expect(ci.output).not.toContain("EBADENGINE");
  }, 120_000);

  it("the machine's own npm warns EBADENGINE exactly when its Node is older than 22.12", async () => {
    const node = systemNode();
    expect(node, "a system node on PATH").not.toBeNull();
    const version = (await inCopy(node!, ["-p", "process.versions.node"])).output.trim();
    const [major, minor] = version.split(".").map(Number) as [number, number];
    const old = major < 22 || (major === 22 && minor < 12);
    const plain = await inCopy("npm", DRY_CI);
    expect(plain.code, plain.output).toBe(0);
    expect(plain.output.includes("EBADENGINE"), `Node ${version}`).toBe(old);
  }, 120_000);

  it("the repository says the Node it needs, and pins the one .ci/install runs npm with", () => {
    const manifest = JSON.parse(readFileSync(path.join(repo, "package.json"), "utf8"));
    expect(manifest.engines).toEqual({ node: ">=22.12" });
    // The lock's root entry says the same (npm ci checks the lock against package.json; a stale one misleads readers).
    const lock = JSON.parse(readFileSync(path.join(repo, "package-lock.json"), "utf8"));
    expect(lock.packages[""].engines).toEqual(manifest.engines);
    expect(manifest.devDependencies.node).toMatch(/^22\.\d+\.\d+$/);
    expect(readFileSync(path.join(repo, ".ci/run"), "utf8")).toContain("bash .ci/install ci ");
  });
});
