import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** The operator token's file in `platform up`'s state folder. */
export const OPERATOR_TOKEN_FILE = "operator-token";

/**
 * The token of whoever runs `platform up` (the operator): the fakes'
 * inspection routes answer only a request carrying it
 * (src/dev/fakes/operatorGate.ts), since under `platform up` tenants share
 * the machine. Kept in the state folder, readable by its owner only, so it
 * holds across restarts; created the first time.
 */
export function loadOrCreateOperatorToken(stateDir: string): string {
  const file = path.join(stateDir, OPERATOR_TOKEN_FILE);
  try {
    const kept = readFileSync(file, "utf8").trim();
    if (/^[0-9a-f]{64}$/.test(kept)) {
      chmodSync(file, 0o600);
      return kept;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // A missing or damaged token is replaced: only `platform up` itself and the operator read it.
  const token = randomBytes(32).toString("hex");
  writeFileSync(file, token + "\n", { mode: 0o600 });
  chmodSync(file, 0o600);
  return token;
}
