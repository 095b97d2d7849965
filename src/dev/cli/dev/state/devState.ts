import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Everything `platform dev` keeps for a project lives in `<dir>/.platform/`. */
export function stateDirFor(projectDir: string): string {
  return path.join(projectDir, ".platform");
}

export interface DevCredentials {
  /** The local API worker's ADMIN_TOKEN. */
  adminToken: string;
  /** The local API worker's SECRETS_ENCRYPTION_KEY (64 hex characters): seals `platform secret put` values in the local D1. */
  secretsKey: string;
  /** The local CLI user's token (stored hashed in the local D1). */
  cliToken?: string;
}

export function loadOrCreateCredentials(stateDir: string): DevCredentials {
  const file = path.join(stateDir, "credentials.json");
  const kept = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Partial<DevCredentials>) : {};
  if (kept.adminToken && kept.secretsKey) return kept as DevCredentials;
  // A state folder from before a credential existed keeps what it has and gains the new one.
  const credentials = {
    ...kept,
    adminToken: kept.adminToken ?? randomBytes(32).toString("hex"),
    secretsKey: kept.secretsKey ?? randomBytes(32).toString("hex"),
  };
  saveCredentials(stateDir, credentials);
  return credentials;
}

export function saveCredentials(stateDir: string, credentials: DevCredentials): void {
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(path.join(stateDir, "credentials.json"), JSON.stringify(credentials, null, 2) + "\n", { mode: 0o600 });
}

/** Written while `platform dev` runs, so other commands find the local platform. */
export interface DevSession {
  pid: number;
  slug: string;
  url: string;
  apiUrl: string;
  cliToken: string;
}

export function writeDevSession(stateDir: string, session: DevSession): void {
  writeFileSync(path.join(stateDir, "dev.json"), JSON.stringify(session, null, 2) + "\n", { mode: 0o600 });
}

/** Removes the session file if `pid` (default: this process) wrote it; another instance's file stays. */
export function clearDevSession(stateDir: string, pid: number = process.pid): void {
  const file = path.join(stateDir, "dev.json");
  try {
    if ((JSON.parse(readFileSync(file, "utf8")) as DevSession).pid !== pid) return;
  } catch {
    // no file, or a torn one: nothing of anyone's to keep
  }
  rmSync(file, { force: true });
}

/** The running local platform for a project, if its process is still alive. */
export function readDevSession(stateDir: string): DevSession | null {
  const file = path.join(stateDir, "dev.json");
  if (!existsSync(file)) return null;
  const session = JSON.parse(readFileSync(file, "utf8")) as DevSession;
  try {
    process.kill(session.pid, 0);
    return session;
  } catch {
    return null;
  }
}

/** The API worker's (and so the console's) port, remembered per folder so its address survives restarts. */
export function readConsolePort(stateDir: string): number | null {
  try {
    const { console: port } = JSON.parse(readFileSync(path.join(stateDir, "ports.json"), "utf8")) as {
      console?: unknown;
    };
    return Number.isInteger(port) ? (port as number) : null;
  } catch {
    return null;
  }
}

export function rememberConsolePort(stateDir: string, port: number): void {
  writeFileSync(path.join(stateDir, "ports.json"), JSON.stringify({ console: port }, null, 2) + "\n");
}
