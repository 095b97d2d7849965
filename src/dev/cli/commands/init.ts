import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { refuseLinksOutOfProject } from "../linksOutOfProject.ts";
import { CliError, type Command } from "../commandLine.ts";
import { projectSlugFor } from "../dev/project/projectSlugFor.ts";
import { KEPT_ENTRIES, SCAFFOLD_PACKAGES, scaffoldFiles, type ScaffoldPackage } from "../init/scaffold.ts";
import { REPO_ROOT, RUNS_FROM_PACKAGE } from "../repoPaths.ts";

/** A word for a shell line: single-quoted unless it is plainly safe. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

function readJson(file: string): Record<string, unknown> | null {
  if (!existsSync(file)) return null;
  try {
    const value: unknown = JSON.parse(readFileSync(file, "utf8"));
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    throw new CliError(`${file} is not valid JSON; fix or remove it, then run platform init again.`);
  }
}

/** This platform's package.json: its version, and the versions of what a project installs beside it. */
function platformManifest() {
  const manifest = readJson(path.join(REPO_ROOT, "package.json")) ?? {};
  const known = {
    ...(manifest.devDependencies as Record<string, string> | undefined),
    ...(manifest.projectTools as Record<string, string> | undefined),
    ...(manifest.dependencies as Record<string, string> | undefined),
  };
  const versions = Object.fromEntries(SCAFFOLD_PACKAGES.map((name) => [name, known[name] ?? "*"]));
  return { version: String(manifest.version), versions: versions as Record<ScaffoldPackage, string> };
}

/**
 * How a new project depends on `platform`: as the project this CLI is
 * installed in does (a `file:` tarball re-pointed from the new folder), or by
 * version.
 */
function platformSpecFor(dir: string, version: string): string {
  const fallback = `^${version}`;
  if (!RUNS_FROM_PACKAGE || path.basename(path.dirname(REPO_ROOT)) !== "node_modules") return fallback;
  const host = path.dirname(path.dirname(REPO_ROOT));
  const manifest = readJson(path.join(host, "package.json"));
  const spec = [manifest?.dependencies, manifest?.devDependencies]
    .map((deps) => (deps as Record<string, unknown> | undefined)?.platform)
    .find((s): s is string => typeof s === "string");
  if (!spec) return fallback;
  if (!spec.startsWith("file:")) return spec;
  const target = path.resolve(host, spec.slice("file:".length));
  const relative = path.relative(dir, target).split(path.sep).join("/");
  return `file:${relative.startsWith(".") ? relative : `./${relative}`}`;
}

/** `platform init <dir>`: scaffolds a project that installs `platform` and tests itself. */
export const initCommand: Command = {
  summary: "Create a new project that imports `platform`.",
  usage: "platform init <dir>",
  help: `
Writes a project into <dir> (created if missing; \`.\` for this folder):
src/index.ts (an itty-router Router), test/index.test.ts (its first test,
with platform/testing), package.json, tsconfig.json and vitest.config.ts.
package.json depends on \`platform\` (as the project this command runs from
does, when it was installed from a tarball) and on the project's own tools
(typescript, vitest, the Workers types), with the scripts:

  npm run dev        platform dev .     (\`npm run dev -- --port 8877\`)
  npm test           vitest run
  npm run typecheck  tsc
  npm run push       platform push .

<dir> must be empty, or hold only an install of \`platform\` (package.json,
package-lock.json, node_modules; .git, .gitignore and .npmrc may be there too):
an existing package.json is kept and completed.

Then run:  cd <dir> && npm install && npm test && npm run dev`,
  options: {},
  async run({ positionals }) {
    const target = positionals[0];
    if (!target || positionals.length > 1)
      throw new CliError("platform init takes exactly one directory. Usage: platform init <dir>", 2);
    const dir = path.resolve(target);
    if (existsSync(dir) && !statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder.`);
    const present = existsSync(dir) ? readdirSync(dir) : [];
    const other = present.filter((entry) => !KEPT_ENTRIES.has(entry));
    if (other.length) {
      throw new CliError(
        `${dir} is not empty (${other.slice(0, 5).join(", ")}${other.length > 5 ? ", …" : ""}); choose a new directory, or one where only \`platform\` was installed.`,
      );
    }
    mkdirSync(dir, { recursive: true });
    const slug = projectSlugFor(dir);
    const { version, versions } = platformManifest();
    const files = scaffoldFiles(
      {
        slug,
        existing: readJson(path.join(dir, "package.json")),
        platformSpec: platformSpecFor(dir, version),
        versions,
      },
      { gitignore: present.includes(".gitignore") ? readFileSync(path.join(dir, ".gitignore"), "utf8") : null },
    );
    // Every file is checked before the first is written: a refusal leaves the folder as it was.
    for (const name of Object.keys(files)) refuseLinksOutOfProject(dir, path.join(dir, name));
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      writeFileSync(path.join(dir, name), content);
    }
    console.log(`Created project "${slug}" in ${dir}`);
    const cd = dir === process.cwd() ? "" : `cd ${shellWord(target)} && `;
    if (RUNS_FROM_PACKAGE) {
      console.log(`Next: ${cd}npm install && npm test && npm run dev`);
    } else {
      // A checkout's CLI: the project can run from here at once; its own scripts need the package installed.
      console.log(`Run it from this checkout: platform dev ${shellWord(target)}`);
      console.log(
        `Or build the package here (npm run package prints its tarball) and: ${cd}npm install <tarball> && npm install && npm test && npm run dev`,
      );
    }
  },
};
