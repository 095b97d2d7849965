import { readFile } from "node:fs/promises";
import type { StrandedRuns } from "../../../contracts/workflowShapes.ts";
import type { ProjectBuild } from "../build/buildProject.ts";
import { portableSourceMap } from "../build/portableSourceMap.ts";
import { CliError } from "../commandLine.ts";
import { requestPlatformApi, type PlatformTarget } from "../platformTarget.ts";
import { strandedRunsTable } from "./strandedRunsTable.ts";

/**
 * The project named `target.slug` in the caller's account, created (with
 * `isPrivate`) when there is none. Another account's project of that name
 * looks missing (404), so creating it then fails with the API's "already
 * exists"; a reserved or malformed slug is refused with the API's message.
 */
export async function ensureProject(
  target: PlatformTarget,
  isPrivate: boolean,
): Promise<{ created: boolean; private: boolean }> {
  const found = await requestPlatformApi(target, "GET", `/projects/${encodeURIComponent(target.slug)}`);
  if (found.status === 200) return { created: false, private: (found.json.project as { private: boolean }).private };
  if (found.status !== 404)
    throw new CliError(found.json.error?.message ?? `The platform API answered ${found.status}.`);
  const created = await requestPlatformApi(target, "POST", "/projects", { slug: target.slug, private: isPrivate });
  if (created.status !== 201)
    throw new CliError(`Cannot create project "${target.slug}": ${created.json.error?.message ?? created.status}`);
  return { created: true, private: (created.json.project as { private: boolean }).private };
}

export interface DeployedProject {
  scriptName: string;
  url: string;
  plugins: Record<string, string>;
  /** This push's version (`v3`). */
  version?: string;
  /** With `force`: the live runs this push strands (they fail, each with its reason). */
  stranded?: StrandedRuns;
}

/**
 * Sends the bundle and metadata to the API worker, which holds the Cloudflare
 * credentials and the project's worker secret and does the Workers for
 * Platforms upload itself, so neither ever reaches the CLI. A push the API
 * refuses because it would strand live workflow runs fails listing them
 * (run id, workflow and step; the first 20 and the count) and the ways out.
 */
export async function deployProject(
  input: PlatformTarget & { build: ProjectBuild; metadata: Record<string, unknown>; force?: boolean },
): Promise<DeployedProject> {
  const bundle = await readFile(input.build.bundlePath, "utf8");
  const { status, json } = await requestPlatformApi(
    input,
    "PUT",
    `/projects/${encodeURIComponent(input.slug)}/deployment`,
    {
      bundle,
      metadata: {
        ...input.metadata,
        capabilities: input.build.capabilities,
        durableObjects: input.build.durableObjects,
      },
      ...(input.force ? { force: true } : {}),
      sourceMap: portableSourceMap(input.build),
    },
  );
  const details = json.error?.details as { stranded?: StrandedRuns["runs"]; count?: number } | undefined;
  if (status === 409 && details?.stranded)
    throw new CliError(
      [
        `Push refused: it would strand ${details.count ?? details.stranded.length} live workflow run(s):`,
        ...strandedRunsTable({ count: details.count ?? details.stranded.length, runs: details.stranded }),
        'Keep the old step name with workflow(name, steps, { renamed: { oldStep: "newStep" } }),',
        "or push again with --force (those runs then fail, each with its reason).",
      ].join("\n"),
    );
  if (status !== 200) throw new CliError(`Deploy refused (${status}): ${json.error?.message ?? "no reason given"}`);
  return {
    scriptName: json.scriptName as string,
    url: json.url as string,
    plugins: (json.plugins as Record<string, string> | undefined) ?? {},
    ...(typeof json.version === "string" ? { version: json.version } : {}),
    ...(json.stranded ? { stranded: json.stranded as StrandedRuns } : {}),
  };
}
