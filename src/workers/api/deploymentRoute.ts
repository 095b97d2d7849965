import { PROJECT_DURABLE_OBJECTS, isProjectDurableObjectClass } from "../../contracts/projectDurableObjects.ts";
import { COMPATIBILITY_DATE } from "../../contracts/workerCompatibility.ts";
import { PlatformError } from "../../core/errors.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { replaceProjectAuthStatements } from "../db/projectAuthTable.ts";
import { replaceProjectCronsStatements } from "../db/projectCronsTable.ts";
import { findLatestDeployment, insertDeploymentStatement, versionAfter } from "../db/projectDeploymentsTable.ts";
import { openProjectSecrets } from "../db/projectSecretsTable.ts";
import { replaceProjectWorkflowsStatements } from "../db/projectWorkflowsTable.ts";
import { replaceProjectWebhooksStatements } from "../db/projectWebhooksTable.ts";
import { uploadProjectScript } from "./dispatchUpload.ts";
import { projectUrlOf } from "./projectUrl.ts";
import { pluginsUsedBy, registerWithPlugins } from "./pluginRegistration.ts";
import type { ApiEnv } from "./env.ts";
import { storableMetadataJson } from "./deploymentMetadataSize.ts";
import { validateMetadataAuth } from "./projectAuthSettings.ts";
import { validateMetadataCrons } from "./projectCrons.ts";
import { validateMetadataWorkflows } from "./projectWorkflows.ts";
import { validateMetadataWebhooks } from "./projectWebhooks.ts";
import { projectLogOf, sourceMapOf } from "./projectLogs/projectLogRoutes.ts";
import { requireOwnedProject } from "./projectRoutes.ts";
import { checkStrandedRuns } from "./strandedRunsCheck.ts";
import type { CliRequest } from "./withCliUser.ts";

/** A bundle plus its metadata, as JSON; Workers for Platforms caps scripts at 10 MiB. */
const DEPLOYMENT_LIMIT_BYTES = 11 * 1024 * 1024;

/**
 * `PUT /projects/:slug/deployment` `{ bundle, metadata, sourceMap?, force? }`: uploads a project's
 * bundle to the dispatch namespace with its bindings and records its crons; keeps the bundle's source
 * map (if sent) for the stacks the platform shows. The worker secret and the Cloudflare token never
 * leave the API worker. Each push is a version (`v1`, `v2`, … per project, bound as
 * `PLATFORM_VERSION`), and a push that would strand a live workflow run is refused before anything is
 * uploaded (409 `conflict`, see strandedRunsCheck.ts) unless `force` is true.
 */
export async function putProjectDeployment(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const body = await readJsonObject(request, DEPLOYMENT_LIMIT_BYTES);
  if (typeof body.bundle !== "string" || body.bundle.length === 0)
    throw new PlatformError("invalid_input", "bundle must be the built worker module as a string.");
  const metadata = body.metadata;
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))
    throw new PlatformError("invalid_input", "metadata must be an object.");
  const metadataJson = storableMetadataJson(metadata as Record<string, unknown>);
  const crons = validateMetadataCrons((metadata as Record<string, unknown>).crons);
  const auth = validateMetadataAuth((metadata as Record<string, unknown>).auth);
  const workflows = validateMetadataWorkflows((metadata as Record<string, unknown>).workflows);
  const webhooks = validateMetadataWebhooks((metadata as Record<string, unknown>).webhooks);
  const durableObjects = (metadata as Record<string, unknown>).durableObjects ?? [];
  if (!Array.isArray(durableObjects) || !durableObjects.every(isProjectDurableObjectClass)) {
    throw new PlatformError(
      "invalid_input",
      `durableObjects may only name ${Object.keys(PROJECT_DURABLE_OBJECTS).join(", ")}.`,
    );
  }
  const sourceMap = sourceMapOf(body.sourceMap);
  if (!env.CLOUDFLARE_ACCOUNT_ID || !env.CLOUDFLARE_API_TOKEN || !env.DISPATCH_NAMESPACE) {
    throw new PlatformError(
      "internal",
      "This platform is not configured to deploy: set CLOUDFLARE_ACCOUNT_ID, DISPATCH_NAMESPACE and the CLOUDFLARE_API_TOKEN secret.",
    );
  }
  if (body.force !== undefined && typeof body.force !== "boolean")
    throw new PlatformError("invalid_input", "force must be true or false.");
  const previous = await findLatestDeployment(env.DB, project.id);
  const stranded = await checkStrandedRuns(env, {
    project,
    running: previous,
    next: workflows,
    force: body.force === true,
  });
  const version = versionAfter(previous);
  const url = projectUrlOf(env, project);
  const { migrationTag } = await uploadProjectScript(
    {
      apiBase: env.CLOUDFLARE_API_BASE ?? "https://api.cloudflare.com/client/v4",
      accountId: env.CLOUDFLARE_ACCOUNT_ID,
      namespace: env.DISPATCH_NAMESPACE,
      apiToken: env.CLOUDFLARE_API_TOKEN,
      fetch: env.CLOUDFLARE_API ? (input, init) => env.CLOUDFLARE_API!.fetch(input as RequestInfo, init) : fetch,
    },
    {
      project: { ...project, url },
      bundle: body.bundle,
      durableObjects: durableObjects as string[],
      previous: {
        tag: previous?.migration_tag ?? null,
        classes: previous ? (JSON.parse(previous.durable_objects) as string[]) : [],
      },
      compatibilityDate: COMPATIBILITY_DATE,
      loginUrl: env.LOGIN_PUBLIC_URL,
      version,
      secrets: await openProjectSecrets(env.DB, env.SECRETS_ENCRYPTION_KEY, project.id),
    },
  );
  const now = Date.now();
  await env.DB.batch([
    ...replaceProjectCronsStatements(env.DB, project.id, crons),
    ...replaceProjectAuthStatements(env.DB, project.id, auth),
    ...replaceProjectWorkflowsStatements(env.DB, project.id, workflows),
    ...replaceProjectWebhooksStatements(env.DB, project.id, webhooks),
    insertDeploymentStatement(env.DB, {
      projectId: project.id,
      bundleBytes: body.bundle.length,
      metadata: metadataJson,
      durableObjects: JSON.stringify(durableObjects),
      migrationTag,
      deployedAt: now,
    }),
  ]);
  // Stacks in the project's log and runs point at its sources with this version's map (none: as they are).
  await projectLogOf(env, project.id)?.setSourceMap(sourceMap);
  const plugins = await registerWithPlugins(
    env,
    project,
    metadata as Record<string, unknown>,
    pluginsUsedBy(previous ? (JSON.parse(previous.metadata) as Record<string, unknown>) : null),
  );
  return Response.json(
    {
      scriptName: project.script_name,
      url,
      crons,
      plugins,
      version,
      deployedAt: now,
      ...(stranded.count > 0 ? { stranded } : {}),
    },
    { status: 200 },
  );
}
