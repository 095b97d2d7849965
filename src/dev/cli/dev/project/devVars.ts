import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseEnv } from "node:util";
import { PlatformError } from "../../../../core/errors.ts";
import { checkSecretName, checkSecretValue, MAX_SECRETS_PER_PROJECT } from "../../../../workers/api/secretRules.ts";

/** The file `platform dev` reads a project's secrets and variables from (wrangler's name for it). */
export const DEV_VARS_FILE = ".dev.vars";

/**
 * `<project>/.dev.vars` as the project's `env` gets it under `platform dev`
 * (dotenv syntax, read with Node's own `util.parseEnv`: `NAME=value`,
 * quotes, `#` comments), by the rules of `platform secret put`: a name the
 * platform keeps (`PLATFORM_*`) or a value too large fails like a build
 * error, naming the file. No file: no variables.
 */
export function readDevVars(projectDir: string): Record<string, string> {
  const file = path.join(projectDir, DEV_VARS_FILE);
  if (!existsSync(file)) return {};
  const vars = parseEnv(readFileSync(file, "utf8")) as Record<string, string>;
  const names = Object.keys(vars);
  try {
    if (names.length > MAX_SECRETS_PER_PROJECT)
      throw new PlatformError(
        "invalid_input",
        `${names.length} variables; a project may have ${MAX_SECRETS_PER_PROJECT}.`,
      );
    for (const name of names) {
      checkSecretName(name);
      // An empty value is a variable set to "" (dotenv's meaning); only its size is bounded.
      if (vars[name] !== "") checkSecretValue(name, vars[name]);
    }
  } catch (error) {
    throw new PlatformError("build_failed", `${DEV_VARS_FILE}: ${(error as Error).message}`);
  }
  return vars;
}
