import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { vi } from "vitest";

/**
 * A CLI command run in this process with a home of its own: a fresh temporary folder whose `config`
 * holds the credentials file, no login, no CI token and no named API unless a test sets them, and
 * what the command prints with console.log kept in `printed`. `end()` undoes it all.
 */
export function cliHome(prefix: string): { work: string; printed: string[]; end(): void } {
  const work = mkdtempSync(path.join(os.tmpdir(), prefix));
  vi.stubEnv("XDG_CONFIG_HOME", path.join(work, "config"));
  vi.stubEnv("PLATFORM_TOKEN", "");
  vi.stubEnv("PLATFORM_API_URL", "");
  const printed: string[] = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
  return {
    work,
    printed,
    end() {
      vi.unstubAllEnvs();
      vi.restoreAllMocks();
      rmSync(work, { recursive: true, force: true });
    },
  };
}
