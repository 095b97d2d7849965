import path from "node:path";
import { PlatformError } from "../../../core/errors.ts";
import { buildProject, type ProjectBuild, writeMetadata } from "../build/buildProject.ts";
import { extractMetadata } from "../build/extractMetadata.ts";
import { CliError, type Command } from "../commandLine.ts";
import { projectSlugFor } from "../dev/projectSlugFor.ts";

export const pushCommand: Command = {
  summary: "Build a project and deploy it to the platform.",
  usage: "platform push [dir] [--dry-run] [--api URL]",
  help: `
Bundles the project with esbuild (\`platform\` resolves to this repository's
runtime), refuses worker code that imports the Node SQLite store, extracts the
project's metadata (workflows, crons, plugin handlers) and writes both to
<dir>/.platform/build/. Without --dry-run it then uploads the bundle and
metadata to the platform's API worker, which deploys it to the Workers for
Platforms dispatch namespace with the project's bindings.

Options:
  --dry-run   stop after writing the bundle and metadata
  --api URL   the platform API (default: $PLATFORM_API_URL); the CLI token comes from $PLATFORM_TOKEN`,
  options: { "dry-run": { type: "boolean" }, api: { type: "string" } },
  async run({ positionals, values }) {
    if (positionals.length > 1) throw new CliError("platform push takes at most one directory.", 2);
    const projectDir = path.resolve(positionals[0] ?? ".");
    let build: ProjectBuild;
    let metadata: Record<string, unknown>;
    try {
      build = await buildProject(projectDir);
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
    const api = (values.api as string | undefined) ?? process.env.PLATFORM_API_URL;
    const token = process.env.PLATFORM_TOKEN;
    if (!api || !token) {
      throw new CliError(
        "Deploying needs the platform API and a CLI token: pass --api URL (or set PLATFORM_API_URL) and set PLATFORM_TOKEN.",
      );
    }
    const { deployProject } = await import("../deploy/deployProject.ts");
    const result = await deployProject({ api, token, slug: projectSlugFor(projectDir), build, metadata });
    console.log(`Deployed ${result.scriptName} to ${result.url}`);
    for (const [plugin, outcome] of Object.entries(result.plugins)) console.log(`  ${plugin} plugin: ${outcome}`);
  },
};
