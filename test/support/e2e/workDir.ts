import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll } from "vitest";
import { REPO } from "./cliProcess.ts";

/**
 * Removes an e2e test's temporary folder. Retried: right after `platform dev`
 * stops, its watchdog may still be clearing its own files in `.platform/`,
 * which makes a single recursive remove fail with ENOTEMPTY.
 */
export function removeWorkDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}

/** A copy of the demo project at `work/<name>`, so a test never touches the state of a developer's `npm start`. */
export function copyDemo(work: string, name = "demo"): string {
  const dir = path.join(work, name);
  cpSync(path.join(REPO, "demo/src"), path.join(dir, "src"), { recursive: true });
  cpSync(path.join(REPO, "demo/package.json"), path.join(dir, "package.json"));
  return dir;
}

/** A temporary folder (named `<prefix>…`) for the projects of one test file, removed after its tests. */
export function useWorkDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  afterAll(() => removeWorkDir(dir));
  return dir;
}
