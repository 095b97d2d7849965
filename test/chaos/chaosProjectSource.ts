import { readFileSync } from "node:fs";
import path from "node:path";

const PROJECT = path.join(import.meta.dirname, "project/src/index.ts");
const BUILD_LINE = "const BUILD = 0;";
const LEDGER_LINE = "const LEDGER_URL = null;";

/**
 * The chaos project's source as build `build`: the same workflows and steps (so the stranded-runs check accepts it
 * over live runs), only the build number its attempts report differs. `ledgerUrl` is written in for a
 * platform that reads no .dev.vars (`platform up`).
 */
export function chaosProjectSource(build: number, ledgerUrl?: string): string {
  const source = readFileSync(PROJECT, "utf8");
  if (!source.includes(BUILD_LINE) || !source.includes(LEDGER_LINE))
    throw new Error(`${PROJECT} lost the lines the driver rewrites: ${BUILD_LINE} ${LEDGER_LINE}`);
  return source
    .replace(BUILD_LINE, `const BUILD = ${build};`)
    .replace(LEDGER_LINE, `const LEDGER_URL = ${JSON.stringify(ledgerUrl ?? null)};`);
}
