import { readFile } from "node:fs/promises";
import type { ProjectBuild } from "../build/buildProject.ts";
import { CliError } from "../commandLine.ts";

/**
 * Sends the bundle and metadata to the API worker, which holds the Cloudflare
 * credentials and the project's worker secret and does the Workers for
 * Platforms upload itself, so neither ever reaches the CLI.
 */
export async function deployProject(input: {
  api: string;
  token: string;
  slug: string;
  build: ProjectBuild;
  metadata: Record<string, unknown>;
}): Promise<{ scriptName: string; url: string; plugins: Record<string, string> }> {
  const bundle = await readFile(input.build.bundlePath, "utf8");
  const response = await fetch(new URL(`/projects/${input.slug}/deployment`, input.api), {
    method: "PUT",
    headers: { authorization: `Bearer ${input.token}`, "content-type": "application/json" },
    body: JSON.stringify({
      bundle,
      metadata: {
        ...input.metadata,
        capabilities: input.build.capabilities,
        durableObjects: input.build.durableObjects,
      },
    }),
  });
  const body = (await response.json().catch(() => ({}))) as {
    error?: { message?: string };
    scriptName?: string;
    url?: string;
    plugins?: Record<string, string>;
  };
  if (!response.ok)
    throw new CliError(`Deploy refused (${response.status}): ${body.error?.message ?? "no reason given"}`);
  return { scriptName: body.scriptName!, url: body.url!, plugins: body.plugins ?? {} };
}
