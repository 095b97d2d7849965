import { APIError } from "cloudflare/core/error";
import { BaseScripts } from "cloudflare/resources/workers-for-platforms/dispatch/namespaces/scripts/scripts";
import { createClient } from "cloudflare/tree-shakable";
import { COMPATIBILITY_FLAGS } from "../../contracts/workerCompatibility.ts";
import { PlatformError } from "../../core/errors.ts";
import {
  PLATFORM_SERVICES,
  projectScriptBindings,
  type ScriptBinding,
  type ScriptMetadata,
  type UploadedProject,
} from "./projectScriptBindings.ts";

/** Where and how the API worker uploads project scripts (Workers for Platforms). */
export interface DispatchUploadTarget {
  /** Cloudflare's API root, e.g. `https://api.cloudflare.com/client/v4`; a stand-in's in tests and `platform up`. */
  apiBase: string;
  accountId: string;
  namespace: string;
  apiToken: string;
  fetch: typeof fetch;
}

const MAIN_MODULE = "worker.js";

/**
 * The multipart body Cloudflare documents (developers.cloudflare.com/workers/configuration/multipart-upload-metadata/):
 * one `metadata` part holding JSON, one part per module named as `main_module` names it.
 * Built here because the SDK (7.3.0) serialises `metadata` as bracketed form fields
 * (`metadata[main_module]`), names modules `files[]` and sends `Content-Type: application/javascript`
 * over the multipart body, none of which Cloudflare reads (the stand-in's test replays that request).
 */
function uploadForm(metadata: ScriptMetadata, bundle: string): FormData {
  const form = new FormData();
  form.append("metadata", new Blob([JSON.stringify(metadata)], { type: "application/json" }));
  form.append(MAIN_MODULE, new Blob([bundle], { type: "application/javascript+module" }), MAIN_MODULE);
  return form;
}

/** What one push uploads as the project's script. */
export interface ProjectScriptUpload {
  project: UploadedProject;
  /** The bundled `worker.js`. */
  bundle: string;
  /** The Durable Object classes the bundle exports. */
  durableObjects: readonly string[];
  /** The script's last migration tag and the classes declared up to it. */
  previous: { tag: string | null; classes: readonly string[] };
  compatibilityDate: string;
  /** The login worker's public URL, bound as `PLATFORM_LOGIN_URL`. */
  loginUrl?: string;
  /** The project version this push makes (`v3`). */
  version?: string;
  /** `platform secret put`'s values, bound as `secret_text`. */
  secrets?: Readonly<Record<string, string>>;
}

/**
 * Uploads a bundle with the SDK's `workersForPlatforms.dispatch.namespaces.scripts.update`
 * with every binding of the project, its `secrets` (`platform secret put`) as `secret_text`
 * (`PUT …/workers/dispatch/namespaces/{ns}/scripts/{name}`). New Durable Object
 * classes are declared as SQLite-backed in a migration after `previous.tag`.
 */
export async function uploadProjectScript(
  target: DispatchUploadTarget,
  upload: ProjectScriptUpload,
): Promise<{ migrationTag: string | null }> {
  const { project, bundle, previous, compatibilityDate, loginUrl, version, secrets = {} } = upload;
  const durableObjects = [...upload.durableObjects];
  const newClasses = durableObjects.filter((c) => !previous.classes.includes(c));
  const migrationTag = newClasses.length ? `v${Date.now()}` : previous.tag;
  const metadata: ScriptMetadata = {
    main_module: MAIN_MODULE,
    // Every invocation's trace (requests, console output, uncaught exceptions) goes to the API
    // worker's tail handler, which keeps it in the project's log (`platform logs`).
    tail_consumers: [{ service: PLATFORM_SERVICES.PLATFORM_API! }],
    compatibility_date: compatibilityDate,
    compatibility_flags: [...COMPATIBILITY_FLAGS],
    // The project's secrets are bound in full on every upload (no keep_bindings): a push binds exactly
    // the current set, so they survive later pushes and a deleted one goes with the next.
    bindings: [
      ...projectScriptBindings(project, durableObjects, loginUrl, version),
      ...Object.entries(secrets).map(([name, text]): ScriptBinding => ({ type: "secret_text", name, text })),
    ],
    ...(newClasses.length
      ? {
          migrations: {
            ...(previous.tag ? { old_tag: previous.tag } : {}),
            new_tag: migrationTag!,
            new_sqlite_classes: newClasses,
          },
        }
      : {}),
  };
  // Only the one resource: the whole client bundles every Cloudflare API (2.4 MB against 65 kB).
  const client = createClient({
    apiToken: target.apiToken,
    baseURL: target.apiBase,
    fetch: target.fetch,
    maxRetries: 0,
    resources: [BaseScripts],
  });
  try {
    await client.workersForPlatforms.dispatch.namespaces.scripts.update(
      project.script_name,
      { account_id: target.accountId, dispatch_namespace: target.namespace, metadata },
      // The SDK's own header would replace the multipart boundary; null removes it so fetch sets it.
      { body: uploadForm(metadata, bundle), headers: { "content-type": null } },
    );
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    const reason = error.errors.map((e) => e.message).join("; ") || `status ${error.status}`;
    throw new PlatformError(
      scriptDoesNotStart(error) ? "invalid_input" : "upstream_error",
      `Cloudflare refused the upload of ${project.script_name}: ${reason}`,
    );
  }
  return { migrationTag };
}

/** Cloudflare's script-validation error code (src/dev/cloudflare/scriptUploadContract.ts lists them). */
const SCRIPT_VALIDATION = 10021;

/**
 * Cloudflare's refusal of a bundle that does not start (script validation,
 * 10021, with the error its top level threw, or its start-up over the CPU
 * limit): the pusher's code to fix, so a 4xx a client does not retry. Every
 * other refusal is of what the platform sent (metadata, migrations, token).
 */
function scriptDoesNotStart(error: APIError): boolean {
  return error.errors.some(
    (e) => e.code === SCRIPT_VALIDATION && /^Uncaught |startup exceeded/i.test(String(e.message)),
  );
}
