import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { authenticateCliUser } from "./cliTokens.ts";
import { uploadProjectScript } from "./dispatchUpload.ts";
import { registerWithPlugins } from "./pluginRegistration.ts";
import type { ApiEnv } from "./env.ts";
import { replaceProjectAuthStatements, validateMetadataAuth } from "./projectAuthSettings.ts";
import { replaceProjectCronsStatements, validateMetadataCrons } from "./projectCrons.ts";
import { replaceProjectWorkflowsStatements, validateMetadataWorkflows } from "./projectWorkflows.ts";
import { requireOwnedProject } from "./projectRoutes.ts";

/** A bundle plus its metadata, as JSON; Workers for Platforms caps scripts at 10 MiB. */
const DEPLOYMENT_LIMIT_BYTES = 11 * 1024 * 1024;
const KNOWN_DURABLE_OBJECTS = new Set(["WorkflowRun", "WorkflowRunIndex"]);
const COMPATIBILITY_DATE = "2026-10-30";

/**
 * `PUT /projects/:slug/deployment`: uploads a project's bundle to the dispatch
 * namespace with its bindings and records its crons. The worker secret and
 * the Cloudflare token never leave the API worker.
 */
export async function deployProject(request: Request & { params: Record<string, string> }, env: ApiEnv): Promise<Response> {
  const user = await authenticateCliUser(request, env.DB);
  const project = await requireOwnedProject(env.DB, user, request.params.slug!);
  const body = await readJsonObject(request, DEPLOYMENT_LIMIT_BYTES);
  if (typeof body.bundle !== "string" || body.bundle.length === 0) throw new PlatformError("invalid_input", "bundle must be the built worker module as a string.");
  const metadata = body.metadata;
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) throw new PlatformError("invalid_input", "metadata must be an object.");
  const crons = validateMetadataCrons((metadata as Record<string, unknown>).crons);
  const auth = validateMetadataAuth((metadata as Record<string, unknown>).auth);
  const workflows = validateMetadataWorkflows((metadata as Record<string, unknown>).workflows);
  const durableObjects = (metadata as Record<string, unknown>).durableObjects ?? [];
  if (!Array.isArray(durableObjects) || !durableObjects.every((c) => typeof c === "string" && KNOWN_DURABLE_OBJECTS.has(c))) {
    throw new PlatformError("invalid_input", `durableObjects may only name ${[...KNOWN_DURABLE_OBJECTS].join(", ")}.`);
  }
  if (!env.CLOUDFLARE_ACCOUNT_ID || !env.CLOUDFLARE_API_TOKEN || !env.DISPATCH_NAMESPACE) {
    throw new PlatformError("internal", "This platform is not configured to deploy: set CLOUDFLARE_ACCOUNT_ID, DISPATCH_NAMESPACE and the CLOUDFLARE_API_TOKEN secret.");
  }
  const previous = await env.DB.prepare(
    "SELECT durable_objects, migration_tag FROM project_deployments WHERE project_id = ? ORDER BY id DESC LIMIT 1",
  )
    .bind(project.id)
    .first<{ durable_objects: string; migration_tag: string | null }>();
  const { migrationTag } = await uploadProjectScript(
    {
      apiBase: env.CLOUDFLARE_API_BASE ?? "https://api.cloudflare.com/client/v4",
      accountId: env.CLOUDFLARE_ACCOUNT_ID,
      namespace: env.DISPATCH_NAMESPACE,
      apiToken: env.CLOUDFLARE_API_TOKEN,
      fetch: env.CLOUDFLARE_API ? (input, init) => env.CLOUDFLARE_API!.fetch(input as RequestInfo, init) : fetch,
    },
    project,
    body.bundle,
    durableObjects as string[],
    { tag: previous?.migration_tag ?? null, classes: previous ? (JSON.parse(previous.durable_objects) as string[]) : [] },
    COMPATIBILITY_DATE,
    env.LOGIN_PUBLIC_URL,
  );
  const now = Date.now();
  await env.DB.batch([
    ...replaceProjectCronsStatements(env.DB, project.id, crons),
    ...replaceProjectAuthStatements(env.DB, project.id, auth),
    ...replaceProjectWorkflowsStatements(env.DB, project.id, workflows),
    env.DB.prepare(
      "INSERT INTO project_deployments (project_id, bundle_bytes, metadata, durable_objects, migration_tag, deployed_at) VALUES (?, ?, ?, ?, ?, ?)",
    ).bind(project.id, body.bundle.length, JSON.stringify(metadata), JSON.stringify(durableObjects), migrationTag, now),
  ]);
  const plugins = await registerWithPlugins(env, project, metadata as Record<string, unknown>);
  const domain = env.PLATFORM_DOMAIN ?? "example.app";
  const url = project.private ? `https://${domain}/${project.slug}/` : `https://${project.slug}.${domain}/`;
  return Response.json({ scriptName: project.script_name, url, crons, plugins }, { status: 200 });
}
