import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** How `platform console` shows the console: a command to start with the URL, or why it does not open one. */
export type BrowserChoice = { command: string; args: string[] } | { command: null; reason: string };

/**
 * `--no-open` and `BROWSER=none` say "don't"; `$BROWSER` (the first of a
 * colon-separated list, as xdg-utils reads it) wins over the system opener
 * (`open` on macOS, `xdg-open` elsewhere when it is on PATH).
 */
export function chooseBrowser(input: {
  noOpen: boolean;
  browserEnv: string | undefined;
  platform: NodeJS.Platform;
  onPath: (command: string) => boolean;
}): BrowserChoice {
  if (input.noOpen) return { command: null, reason: "--no-open" };
  const browser = input.browserEnv?.split(":")[0]?.trim();
  if (browser === "none") return { command: null, reason: "BROWSER=none" };
  if (browser) {
    const [command, ...args] = browser.split(/\s+/);
    return { command: command!, args };
  }
  if (input.platform === "darwin") return { command: "open", args: [] };
  if (input.onPath("xdg-open")) return { command: "xdg-open", args: [] };
  return { command: null, reason: "no $BROWSER and no xdg-open on PATH" };
}

export function isOnPath(command: string): boolean {
  return (process.env.PATH ?? "").split(path.delimiter).some((dir) => {
    try {
      accessSync(path.join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Starts the browser detached; resolves with the spawn error, or null once it started. */
export function startBrowser(choice: { command: string; args: string[] }, url: string): Promise<Error | null> {
  return new Promise((resolve) => {
    const child = spawn(choice.command, [...choice.args, url], { detached: true, stdio: "ignore" });
    child.once("error", (error) => resolve(error));
    child.once("spawn", () => {
      child.unref();
      resolve(null);
    });
  });
}
