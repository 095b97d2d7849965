import { PlatformError } from "../../core/errors.ts";
import type { ProjectRow } from "../db/projectsTable.ts";

/** Where and how the API worker uploads project scripts (Workers for Platforms). */
export interface DispatchUploadTarget {
  apiBase: string;
  accountId: string;
  namespace: string;
  apiToken: string;
  fetch: typeof fetch;
}

export interface ScriptBinding {
  type: string;
  name: string;
  [field: string]: unknown;
}

/** Service names the project's plugin bindings point at (see README, "Deploying"). */
export const PLATFORM_SERVICES = {
  PLATFORM_API: "platform-api",
  CHATSERVER_PLUGIN: "platform-plugin-chatserver",
  WORKSPACE_PLUGIN: "platform-plugin-workspace",
  EMAIL_PLUGIN: "platform-plugin-email-send",
} as const;

const DO_BINDINGS: Record<string, string> = { WorkflowRun: "WORKFLOW_RUNS", WorkflowRunIndex: "WORKFLOW_RUN_INDEX" };

/**
 * Every binding a project worker gets; the worker secret travels only here,
 * server to Cloudflare. `loginUrl` (the login worker's public URL) becomes
 * `PLATFORM_LOGIN_URL`, where the project sends browsers to sign in.
 */
export function projectScriptBindings(
  project: ProjectRow,
  durableObjects: string[],
  loginUrl?: string,
): ScriptBinding[] {
  return [
    ...Object.entries(PLATFORM_SERVICES).map(([name, service]) => ({ type: "service", name, service })),
    { type: "secret_text", name: "PLATFORM_WORKER_SECRET", text: project.worker_secret },
    { type: "plain_text", name: "PLATFORM_PROJECT_ID", text: String(project.id) },
    { type: "plain_text", name: "PLATFORM_PROJECT_SLUG", text: project.slug },
    ...(loginUrl ? [{ type: "plain_text", name: "PLATFORM_LOGIN_URL", text: loginUrl }] : []),
    ...durableObjects.map((className) => ({
      type: "durable_object_namespace",
      name: DO_BINDINGS[className] ?? className.toUpperCase(),
      class_name: className,
    })),
  ];
}

/**
 * Uploads a bundle with `PUT …/workers/dispatch/namespaces/{ns}/scripts/{name}`
 * (multipart: a `metadata` JSON part and the module). New Durable Object
 * classes are declared as SQLite-backed in a migration after `previousTag`.
 */
export async function uploadProjectScript(
  target: DispatchUploadTarget,
  project: ProjectRow,
  bundle: string,
  durableObjects: string[],
  previous: { tag: string | null; classes: string[] },
  compatibilityDate: string,
  loginUrl?: string,
): Promise<{ migrationTag: string | null }> {
  const newClasses = durableObjects.filter((c) => !previous.classes.includes(c));
  const migrationTag = newClasses.length ? `v${Date.now()}` : previous.tag;
  const metadata = {
    main_module: "worker.js",
    compatibility_date: compatibilityDate,
    compatibility_flags: ["nodejs_compat"],
    bindings: projectScriptBindings(project, durableObjects, loginUrl),
    ...(newClasses.length
      ? {
          migrations: {
            ...(previous.tag ? { old_tag: previous.tag } : {}),
            new_tag: migrationTag,
            new_sqlite_classes: newClasses,
          },
        }
      : {}),
  };
  const form = new FormData();
  form.append("metadata", new Blob([JSON.stringify(metadata)], { type: "application/json" }));
  form.append("worker.js", new Blob([bundle], { type: "application/javascript+module" }), "worker.js");
  const url = `${target.apiBase}/accounts/${target.accountId}/workers/dispatch/namespaces/${target.namespace}/scripts/${project.script_name}`;
  const response = await target.fetch(url, {
    method: "PUT",
    headers: { authorization: `Bearer ${target.apiToken}` },
    body: form,
  });
  const body = (await response.json().catch(() => null)) as {
    success?: boolean;
    errors?: { message: string }[];
  } | null;
  if (!response.ok || !body?.success) {
    const reason = body?.errors?.map((e) => e.message).join("; ") || `status ${response.status}`;
    throw new PlatformError("upstream_error", `Cloudflare refused the upload of ${project.script_name}: ${reason}`);
  }
  return { migrationTag };
}
