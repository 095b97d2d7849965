import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/**
 * `platform login`'s CLI tokens: `$XDG_CONFIG_HOME/platform/credentials.json`
 * (default `~/.config/platform/credentials.json`), mode 0600 in a 0700
 * folder, one entry per API URL, and the URL last logged in to, which
 * commands use when given no `--api`.
 */
export interface StoredLogin {
  token: string;
  email: string;
  savedAt: string;
}

export interface CredentialsFile {
  /** The API URL of the last `platform login`. */
  current?: string;
  logins: Record<string, StoredLogin>;
}

export function credentialsPath(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : null;
  return path.join(config ?? path.join(env.HOME || os.homedir(), ".config"), "platform", "credentials.json");
}

/** `http://127.0.0.1:8800/` and `HTTP://127.0.0.1:8800` are one entry: origin plus path, no trailing slash. */
export function normalizeApiUrl(api: string): string {
  let url: URL;
  try {
    url = new URL(api);
  } catch {
    throw new Error(`"${api}" is not a URL (e.g. https://api.example.app).`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new Error(`"${api}" is not an http(s) URL.`);
  return (url.origin + url.pathname).replace(/\/+$/, "");
}

export function readCredentials(file = credentialsPath()): CredentialsFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { logins: {} };
  }
  const parsed = JSON.parse(text) as Partial<CredentialsFile>;
  return {
    ...(typeof parsed.current === "string" ? { current: parsed.current } : {}),
    logins: typeof parsed.logins === "object" && parsed.logins !== null ? parsed.logins : {},
  };
}

/** Writes the whole file through a 0600 temporary file renamed over it, so no reader sees it half-written or open. */
export function writeCredentials(credentials: CredentialsFile, file = credentialsPath()): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, file);
}

export function saveLogin(api: string, login: { token: string; email: string }, file = credentialsPath()): void {
  const credentials = readCredentials(file);
  const key = normalizeApiUrl(api);
  credentials.logins[key] = { ...login, savedAt: new Date().toISOString() };
  credentials.current = key;
  writeCredentials(credentials, file);
}

/** Forgets the login to `api`; the current URL stays unless it was this one. */
export function forgetLogin(api: string, file = credentialsPath()): boolean {
  const credentials = readCredentials(file);
  const key = normalizeApiUrl(api);
  if (!(key in credentials.logins)) return false;
  delete credentials.logins[key];
  if (credentials.current === key) delete credentials.current;
  writeCredentials(credentials, file);
  return true;
}
