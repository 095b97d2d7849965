import {
  type EnvironmentEntry,
  PLATFORM_SECRETS,
  requiredSettings,
  WRANGLER_CREDENTIALS,
} from "./platformEnvironment.ts";
import type { PlatformWorkerConfig } from "./platformWorkerConfigs.ts";

/** `npm run deploy -- --help`: the command, then every environment variable it reads, grouped by what it is for. */
export function environmentHelp(workers: PlatformWorkerConfig[]): string {
  const entry = (e: EnvironmentEntry & { secret?: string }) => {
    const into = e.secret && e.secret !== e.envVar ? ` (set as the secret ${e.secret})` : "";
    const where = e.workers.length > 0 ? ` [${e.workers.join(", ")}]` : "";
    return `  ${e.envVar}${where}${into}\n      ${e.purpose}\n      make one: ${e.howToMake}`;
  };
  const required = new Set(requiredSettings(workers).map((s) => s.envVar));
  const overridable = workers.flatMap((w) =>
    Object.keys(w.raw.vars ?? {})
      .filter((name) => !required.has(name))
      .map((name) => `${name} [${w.name}]`),
  );
  return `Usage: npm run deploy -- [--dry-run] [--outdir DIR]

Deploys the whole platform with wrangler: checks the environment, builds every
worker offline, creates or reuses the D1 database, the queue and the dispatch
namespace, applies the D1 migrations, then deploys each worker with its secrets
in the order its bindings require. The committed wrangler.toml files are never
edited: each worker is deployed from a generated config in a temporary directory.

  --dry-run      build every worker with \`wrangler deploy --dry-run\` and check
                 every config, with no account and no network; print the plan
  --outdir DIR   with --dry-run: keep the built bundles in DIR

wrangler's credentials:
${entry(WRANGLER_CREDENTIALS)}

Settings (required):
${requiredSettings(workers).map(entry).join("\n")}

Secrets (required; each is set on the workers in brackets):
${PLATFORM_SECRETS.map(entry).join("\n")}

Optional: any other var of a worker's wrangler.toml is replaced by an
environment variable of the same name when one is set:
  ${overridable.join(", ")}
`;
}
