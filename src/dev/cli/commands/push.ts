import path from "node:path";
import { PlatformError } from "../../../core/errors.ts";
import { buildProject, type ProjectBuild, writeMetadata } from "../build/buildProject.ts";
import { extractMetadata } from "../build/extractMetadata.ts";
import { projectFolder } from "../projectFolder.ts";
import { CliError, type Command } from "../commandLine.ts";
import { pushSlugFor } from "../deploy/pushSlug.ts";
import { loggedInToken, resolvePlatformApi } from "../platformTarget.ts";
import { describeStrandedRuns } from "../../../engine/control/strandedRuns.ts";

export const pushCommand: Command = {
  summary: "Build a project and deploy it to the platform (creating it on first push).",
  usage: "platform push [dir] [--api URL] [--slug S] [--private] [--force] [--dry-run]",
  help: `
Bundles the project with esbuild (\`platform\` resolves to this repository's
runtime), refuses worker code that imports the Node SQLite store, extracts the
project's metadata (workflows, crons, plugin handlers) and writes both to
<dir>/.platform/build/. Without --dry-run it then deploys: the first push
creates the project under its slug (--slug, else package.json "name", else the
folder name; reserved names are refused), every push uploads the bundle and
metadata to the platform's API worker, which deploys it to the Workers for
Platforms dispatch namespace with the project's bindings. Prints the
project's address and version (v1, v2, … per project), and how to sign in
when the project uses sign-in.

Before a new version goes live, the platform checks it against the live
workflow runs: a push whose workflows lack a step (or a workflow) some live
run is at or will claim next is refused (exit 1) listing those runs. Keep the
old name with workflow(name, steps, { renamed: { oldStep: "newStep" } }), or
push with --force: the stranded runs then fail, each with its reason.

Options:
  --api URL   the platform API (default: $PLATFORM_API_URL, else the one of the
              last \`platform login\`); the CLI token is $PLATFORM_TOKEN, else
              the one \`platform login\` stored for that API
  --slug S    the project's slug (default: package.json name or folder name)
  --private   create the project as a private deployment, served at
              https://<domain>/<slug>/ (only on the first push)
  --force     deploy even when the push would strand live workflow runs
  --dry-run   stop after writing the bundle and metadata`,
  options: {
    "dry-run": { type: "boolean" },
    api: { type: "string" },
    slug: { type: "string" },
    private: { type: "boolean" },
    force: { type: "boolean" },
  },
  async run({ positionals, values }) {
    if (positionals.length > 1) throw new CliError("platform push takes at most one directory.", 2);
    const projectDir = projectFolder(positionals[0]);
    let build: ProjectBuild;
    let metadata: Record<string, unknown>;
    try {
      // The map stays beside the bundle, unlinked; the platform keeps it to point stacks at the sources.
      build = await buildProject(projectDir, undefined, { sourceMap: "external" });
      metadata = await extractMetadata(build);
    } catch (error) {
      throw new CliError(`Build failed: ${error instanceof PlatformError ? error.message : String(error)}`);
    }
    const metadataFile = await writeMetadata(build, metadata);
    console.log(
      `Built ${path.relative(process.cwd(), build.bundlePath) || build.bundlePath} (${build.bundleBytes} bytes)`,
    );
    console.log(`Metadata ${path.relative(process.cwd(), metadataFile) || metadataFile}`);
    if (values["dry-run"]) {
      console.log("Dry run: nothing deployed.");
      return;
    }
    const api = resolvePlatformApi(values.api as string | undefined);
    if (!api) throw new CliError("Which platform? Run `platform login --api URL` first, or pass --api URL.");
    const token = loggedInToken(api);
    const slug = pushSlugFor(projectDir, values.slug as string | undefined);
    const { deployProject, ensureProject } = await import("../deploy/deployProject.ts");
    const target = { apiUrl: api.apiUrl, token, slug };
    const project = await ensureProject(target, values.private === true);
    if (project.created)
      console.log(`Created project "${slug}"${project.private ? " (private)" : ""} on ${api.apiUrl}`);
    else if (values.private && !project.private)
      console.log(`Project "${slug}" already exists as a public project: --private applies only when creating it.`);
    const result = await deployProject({ ...target, build, metadata, force: values.force === true });
    console.log(`Deployed ${result.scriptName}${result.version ? ` as version ${result.version}` : ""}`);
    if (result.stranded?.count) {
      console.log(`Forced: ${result.stranded.count} live workflow run(s) will fail at a step this version lacks:`);
      for (const line of describeStrandedRuns(result.stranded)) console.log(line);
    }
    for (const [plugin, outcome] of Object.entries(result.plugins)) console.log(`  ${plugin} plugin: ${outcome}`);
    console.log(`Open ${result.url}`);
    if (metadata.auth)
      console.log(
        `  Sign in there with the platform's identity provider (the project's sign-in page, ${result.url.replace(/\/$/, "")}/api/auth/signin/idp).`,
      );
  },
};
