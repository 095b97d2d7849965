import type { ScriptUpdateParams } from "cloudflare/resources/workers-for-platforms/dispatch/namespaces/scripts/scripts";
import { PLUGINS, pluginWorkerName } from "../../contracts/pluginRegistry.ts";
import { projectDurableObjectBinding } from "../../contracts/projectDurableObjects.ts";

// Types only from Cloudflare's SDK: `platform dev` and `platform up` build bindings with this module on every
// start, and loading the SDK's modules costs them a fifth of a second.

/** What an upload needs of a project (a `ProjectRow` has it). */
export interface UploadedProject {
  id: number;
  slug: string;
  script_name: string;
  worker_secret: string;
  /** Where it is served (projectUrl.ts): bound as `PLATFORM_PROJECT_URL`, the origin of its callback and stream URLs. */
  url?: string;
}

/** The upload's metadata part, as Cloudflare's SDK types it. */
export type ScriptMetadata = ScriptUpdateParams.Metadata;
export type ScriptBinding = NonNullable<ScriptMetadata["bindings"]>[number];

/**
 * The platform workers a project's service bindings point at (see
 * docs/deploying.md): the API worker and each plugin of the registry, by its binding.
 */
export const PLATFORM_SERVICES: Readonly<Record<string, string>> = {
  PLATFORM_API: "platform-api",
  ...Object.fromEntries(PLUGINS.map((plugin) => [plugin.binding, pluginWorkerName(plugin)])),
};

/**
 * Every binding a project worker gets; the worker secret travels only here,
 * server to Cloudflare. `loginUrl` (the login worker's public URL) becomes
 * `PLATFORM_LOGIN_URL`, where the project sends browsers to sign in;
 * `version` (`v3`, the project's push that made this script) becomes
 * `PLATFORM_VERSION`, which the runs it starts record.
 */
export function projectScriptBindings(
  project: UploadedProject,
  durableObjects: string[],
  loginUrl?: string,
  version?: string,
): ScriptBinding[] {
  return [
    ...Object.entries(PLATFORM_SERVICES).map(([name, service]): ScriptBinding => ({ type: "service", name, service })),
    { type: "secret_text", name: "PLATFORM_WORKER_SECRET", text: project.worker_secret },
    { type: "plain_text", name: "PLATFORM_PROJECT_ID", text: String(project.id) },
    { type: "plain_text", name: "PLATFORM_PROJECT_SLUG", text: project.slug },
    ...(project.url ? [{ type: "plain_text", name: "PLATFORM_PROJECT_URL", text: project.url } as const] : []),
    ...(loginUrl ? [{ type: "plain_text", name: "PLATFORM_LOGIN_URL", text: loginUrl } as const] : []),
    ...(version ? [{ type: "plain_text", name: "PLATFORM_VERSION", text: version } as const] : []),
    ...durableObjects.map(
      (className): ScriptBinding => ({
        type: "durable_object_namespace",
        name: projectDurableObjectBinding(className),
        class_name: className,
      }),
    ),
  ];
}
