import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { credentialsPath } from "../../credentials/credentialsFile.ts";

/**
 * This machine's `platform dev` key: 32 random bytes (hex) in
 * `dev-machine.key` beside the CLI's credentials
 * (`$XDG_CONFIG_HOME/platform/`, default `~/.config/platform/`), mode 0600 in
 * a 0700 folder, created on first use and never inside a project. It signs
 * what `platform dev` records in a project's `.platform/` about the processes
 * it started, so a record that arrived with the folder (a cloned repository,
 * an unpacked archive) cannot name a process for `platform dev` to stop.
 */
export function machineKeyPath(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(credentialsPath(env)), "dev-machine.key");
}

const KEY = /^[0-9a-f]{64}$/;

/** The key, created (exclusively: of two first starts, both end up with the winner's) when there is none. */
export function loadOrCreateMachineKey(env: NodeJS.ProcessEnv = process.env): Buffer {
  const file = machineKeyPath(env);
  const existing = readKey(file);
  if (existing) return existing;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(32).toString("hex") + "\n", { flag: "wx", mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
  const key = readKey(file);
  if (!key) throw new Error(`${file} is not a platform dev key (64 hex characters); delete it and start again.`);
  return key;
}

function readKey(file: string): Buffer | null {
  let text: string;
  try {
    text = readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
  return KEY.test(text) ? Buffer.from(text, "hex") : null;
}
