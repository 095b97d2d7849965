import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CliError } from "../commandLine.ts";
import { type EnsuredResource, ensureResource, platformResources, RESOURCE_LABEL } from "./cloudflareResources.ts";
import { type DeployPass, deployOrder, workerDependencies } from "./deployOrder.ts";
import { generatedConfig } from "./generatedConfig.ts";
import { environmentProblems, secretsOf, workerSecrets } from "./platformEnvironment.ts";
import { type PlatformWorkerConfig, readPlatformWorkerConfigs } from "./platformWorkerConfigs.ts";
import { createWrangler, offlineEnvironment, type Wrangler } from "./wranglerRunner.ts";

export interface DeployPlatformOptions {
  repoRoot: string;
  /** Build and check everything, create and upload nothing, without any account or network. */
  dryRun: boolean;
  /** Where secrets and settings are read from. */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** Dry run: keep the built bundles here (default: a temporary directory, removed afterwards). */
  outDir?: string;
  /** Tests: stand-ins for wrangler with an account (`online`) and without one (`offline`). */
  wrangler?: { online: Wrangler; offline: Wrangler };
}

export type StepKind = "check" | "resource" | "migrations" | "deploy";

export interface DeployStep {
  kind: StepKind;
  /** What the step acts on: a worker, a resource or a database name. */
  subject: string;
  text: string;
}

export interface PassBuild extends DeployPass {
  /** The bundle `wrangler deploy --dry-run` wrote. */
  bundle: string;
  bytes: number;
}

export interface DeployReport {
  steps: DeployStep[];
  builds: PassBuild[];
  resources: EnsuredResource[];
  /** What a real deploy would still need from the environment (a dry run lists it, a deploy refuses). */
  problems: string[];
}

/** A well-formed D1 id for configs that are only built, never uploaded. */
const DRY_RUN_D1_ID = "00000000-0000-0000-0000-000000000000";

/**
 * Deploys the whole platform with wrangler: checks the environment, builds
 * every worker offline, creates or reuses the D1 database, queue and dispatch
 * namespace, applies the D1 migrations, then uploads each worker with its
 * secrets in the order its bindings require. The committed configs are never
 * edited: each pass is deployed from a generated config in a temporary
 * directory (removed afterwards, with the secrets files).
 */
export async function deployPlatform(options: DeployPlatformOptions): Promise<DeployReport> {
  const { repoRoot, dryRun, env, log } = options;
  const workers = readPlatformWorkerConfigs(repoRoot);
  const problems = environmentProblems(workers, env);
  if (!dryRun && problems.length > 0)
    throw new CliError(
      `The environment is not ready to deploy; nothing was created.\n  - ${problems.join("\n  - ")}\n` +
        "`npm run deploy -- --help` lists every variable.",
    );
  const passes = deployOrder(workers.map((w) => ({ name: w.name, needs: workerDependencies(w.raw) })));
  const resources = platformResources(workers);
  const workDir = await mkdtemp(path.join(tmpdir(), "platform-deploy-"));
  const wrangler = options.wrangler ?? {
    online: createWrangler({ repoRoot, env }),
    offline: createWrangler({ repoRoot, env: offlineEnvironment(env, path.join(workDir, "home")) }),
  };
  const byName = new Map(workers.map((w) => [w.name, w]));
  const steps: DeployStep[] = [];
  const step = (kind: StepKind, subject: string, text: string) => {
    steps.push({ kind, subject, text });
    log(`${steps.length}. ${text}`);
  };
  const writeConfig = async (pass: DeployPass, index: number, d1Ids: Record<string, string>) => {
    const file = path.join(workDir, "configs", `${index}-${pass.worker}`, "wrangler.json");
    const config = generatedConfig(byName.get(pass.worker)!, { repoRoot, d1Ids, env, omitServices: pass.omitServices });
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify(config, null, 2));
    return file;
  };
  const writeSecrets = async (pass: DeployPass, index: number, placeholders: boolean) => {
    const file = path.join(workDir, `secrets-${index}-${pass.worker}.json`);
    await writeFile(file, JSON.stringify(workerSecrets(pass.worker, env, placeholders)), { mode: 0o600 });
    return file;
  };

  try {
    log(
      dryRun
        ? `Dry run: deploying the platform (${workers.length} workers) would do this; nothing is created or uploaded.`
        : `Deploying the platform (${workers.length} workers) with wrangler.`,
    );
    const builds = await buildEveryPass();
    step(
      "check",
      "all",
      `Checked every config: built ${builds.length} passes with \`wrangler deploy --dry-run\` (no account, no network):\n` +
        builds.map((b) => `   ✓ ${describePass(b)}: ${(b.bytes / 1024).toFixed(1)} KiB`).join("\n"),
    );

    const ensured: EnsuredResource[] = [];
    for (const resource of resources) {
      const label = `${RESOURCE_LABEL[resource.kind]} "${resource.name}" (bound by ${resource.boundBy.join(", ")})`;
      if (dryRun) {
        step("resource", resource.name, `Would create or reuse the ${label} and read its id back.`);
        continue;
      }
      const done = await ensureResource(wrangler.online, resource);
      ensured.push(done);
      step("resource", resource.name, `${done.created ? "Created" : "Reused"} the ${label}: id ${done.id}.`);
    }
    const d1Ids = Object.fromEntries(ensured.filter((r) => r.kind === "d1").map((r) => [r.name, r.id]));

    for (const migrated of migratedDatabases(workers)) {
      const files = (await readdir(path.join(repoRoot, migrated.dir))).filter((f) => f.endsWith(".sql")).sort();
      const what = `D1 migrations of "${migrated.database}" (${files.length} files in ${migrated.dir}/, those not yet applied)`;
      if (dryRun) {
        step(
          "migrations",
          migrated.database,
          `Would apply the ${what} with \`wrangler d1 migrations apply --remote\`.`,
        );
        continue;
      }
      const config = await writeConfig({ worker: migrated.worker, omitServices: [] }, 0, d1Ids);
      await wrangler.online(["d1", "migrations", "apply", migrated.database, "--remote", "-c", config], {
        echo: indent(log),
      });
      step("migrations", migrated.database, `Applied the ${what}.`);
    }

    for (const [index, pass] of passes.entries()) {
      const secrets = secretsOf([pass.worker]).map((s) => s.secret);
      const detail = `${describePass(pass)}${secrets.length > 0 ? `, with secrets ${secrets.join(", ")}` : ""}`;
      if (dryRun) {
        step("deploy", pass.worker, `Would deploy ${detail}.`);
        continue;
      }
      const config = await writeConfig(pass, index + 1, d1Ids);
      const secretsFile = await writeSecrets(pass, index + 1, false);
      await wrangler.online(["deploy", "-c", config, "--secrets-file", secretsFile], { echo: indent(log) });
      step("deploy", pass.worker, `Deployed ${detail}.`);
    }

    if (dryRun && problems.length > 0)
      log(`A real deploy would first need these from the environment:\n  - ${problems.join("\n  - ")}`);
    log(dryRun ? "Dry run complete: every worker builds and every config checks." : "The platform is deployed.");
    return { steps, builds, resources: ensured, problems };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }

  /** Every pass built exactly as it will be deployed (same generated config and secrets file), offline and at once. */
  async function buildEveryPass(): Promise<PassBuild[]> {
    const outRoot = options.outDir ?? path.join(workDir, "out");
    const d1Ids = Object.fromEntries(resources.filter((r) => r.kind === "d1").map((r) => [r.name, DRY_RUN_D1_ID]));
    return Promise.all(
      passes.map(async (pass, index) => {
        const config = await writeConfig(pass, index + 1, d1Ids);
        const secretsFile = await writeSecrets(pass, index + 1, true);
        const outDir = path.join(outRoot, `${index + 1}-${pass.worker}`);
        const { stdout } = await wrangler.offline([
          "deploy",
          "-c",
          config,
          "--secrets-file",
          secretsFile,
          "--dry-run",
          "--outdir",
          outDir,
        ]);
        if (!stdout.includes("--dry-run: exiting now."))
          throw new CliError(`\`wrangler deploy --dry-run\` of ${pass.worker} did not finish:\n${stdout}`);
        const bundle = path.join(outDir, "index.js");
        return { ...pass, bundle, bytes: (await stat(bundle)).size };
      }),
    );
  }
}

function describePass(pass: DeployPass): string {
  return pass.omitServices.length === 0
    ? pass.worker
    : `${pass.worker} (first pass, without ${pass.omitServices.join(", ")}: Cloudflare accepts a binding only to a worker that exists)`;
}

const indent = (log: (line: string) => void) => (line: string) => log(`     ${line}`);

/** Each D1 database whose binding names a migrations directory, with a worker config that binds it. */
function migratedDatabases(workers: PlatformWorkerConfig[]): Array<{ database: string; dir: string; worker: string }> {
  const found: Array<{ database: string; dir: string; worker: string }> = [];
  for (const worker of workers)
    for (const db of worker.raw.d1_databases ?? [])
      if (db.database_name && db.migrations_dir && !found.some((f) => f.database === db.database_name))
        found.push({
          database: db.database_name,
          dir: path.relative(".", path.join(path.dirname(worker.configPath), db.migrations_dir)),
          worker: worker.name,
        });
  return found;
}
