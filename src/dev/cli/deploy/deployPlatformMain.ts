import { parseArgs } from "node:util";
import { REPO_ROOT } from "../repoPaths.ts";
import { CliError } from "../commandLine.ts";
import { deployPlatform } from "./deployPlatform.ts";
import { environmentHelp } from "./environmentHelp.ts";
import { readPlatformWorkerConfigs } from "./platformWorkerConfigs.ts";

/** `npm run deploy -- [--dry-run] [--outdir DIR]`: deploys the whole platform (see deployPlatform.ts). */
async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: { "dry-run": { type: "boolean" }, outdir: { type: "string" }, help: { type: "boolean", short: "h" } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(environmentHelp(readPlatformWorkerConfigs(REPO_ROOT)));
    return 0;
  }
  await deployPlatform({
    repoRoot: REPO_ROOT,
    dryRun: values["dry-run"] ?? false,
    outDir: values.outdir,
    env: process.env,
    log: (line) => console.log(line),
  });
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`deploy: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof CliError ? error.exitCode : 1);
  },
);
