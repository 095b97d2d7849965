import type { StepEnv } from "../../engine/execution/stepContext.ts";
import type { PlatformEnv } from "./platformEnv.ts";

const seen = new WeakMap<PlatformEnv, StepEnv>();
const NONE: StepEnv = Object.freeze({});

/**
 * A project's own variables and secrets in its environment, as a step reads
 * them (`ctx.env`): the string values, but the platform's `PLATFORM_*` (which
 * no project variable may be named). Read once per environment object.
 */
export function projectVariables(env: PlatformEnv | null): StepEnv {
  if (!env) return NONE;
  let vars = seen.get(env);
  if (!vars) {
    const own: Record<string, string> = {};
    for (const [name, value] of Object.entries(env))
      if (typeof value === "string" && !name.startsWith("PLATFORM_")) own[name] = value;
    vars = Object.freeze(own);
    seen.set(env, vars);
  }
  return vars;
}
