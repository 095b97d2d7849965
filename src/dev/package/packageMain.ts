import path from "node:path";
import { REPO_ROOT } from "../cli/repoPaths.ts";
import { buildPackage } from "./buildPackage.ts";

// `npm run package [-- --out DIR]`: builds the installable `platform` package; the last line printed is the tarball's path.
const outFlag = process.argv.indexOf("--out");
const outDir = path.resolve(outFlag >= 0 ? process.argv[outFlag + 1]! : path.join(REPO_ROOT, "artifacts"));

buildPackage({ repoRoot: REPO_ROOT, outDir, log: (line) => console.error(line) }).then(
  (tarball) => console.log(tarball),
  (error: unknown) => {
    console.error(`npm run package: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
