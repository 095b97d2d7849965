import { rmSync } from "node:fs";

/**
 * Removes an e2e test's temporary folder. Retried: right after `platform dev`
 * stops, its watchdog may still be clearing its own files in `.platform/`,
 * which makes a single recursive remove fail with ENOTEMPTY.
 */
export function removeWorkDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
}
