import { COMPATIBILITY_DATE } from "../../contracts/workerCompatibility.ts";
import type { ScriptUpdateParams } from "cloudflare/resources/workers-for-platforms/dispatch/namespaces/scripts/scripts";
import { type CloudflareRefusal, cloudflareRefusal, cloudflareSuccess } from "./cloudflareApiEnvelope.ts";
import type { ScriptStarter } from "./scriptStartup.ts";
import {
  CLOUDFLARE_ERROR,
  checkScriptExports,
  checkScriptUpload,
  type ScriptState,
  type UploadedPart,
} from "./scriptUploadContract.ts";

/** A script the stand-in accepted: what `platform up` serves through its dispatcher. */
export interface AcceptedScript extends ScriptState {
  name: string;
  metadata: ScriptUpdateParams.Metadata;
  /** Every uploaded module by part name; `metadata.main_module` names the entry. */
  modules: Map<string, { contentType: string; content: Uint8Array }>;
  etag: string;
  createdOn: string;
  modifiedOn: string;
}

export interface ScriptUploadStandInOptions {
  /**
   * Starts each upload that passes the metadata checks, as Cloudflare does
   * before accepting it: one that does not start is refused (10021 with the
   * runtime's message), and its exports are checked against its migrations
   * and bindings. `startInWorkerd` (workerdScriptStarter.ts) in Node.
   */
  startScript: ScriptStarter;
  /** When set, requests must carry `Authorization: Bearer <apiToken>`. */
  apiToken?: string;
  /** When set, only this account and dispatch namespace exist. */
  accountId?: string;
  namespace?: string;
  /** The newest compatibility date the local runtime supports; workerd 1.20261023.1 supports 2026-10-30. */
  latestCompatibilityDate?: string;
  /** The account's KV namespace ids; a kv_namespace binding naming another is refused (10042). None by default. */
  kvNamespaceIds?: readonly string[];
  now?: () => number;
  /** Called with each accepted script before the upload is answered (`platform up` starts serving it). */
  onAccepted?: (script: AcceptedScript) => void | Promise<void>;
}

export interface ScriptUploadStandIn {
  fetch(request: Request): Promise<Response>;
  /** Accepted scripts by name, newest upload of each. */
  scripts(): ReadonlyMap<string, AcceptedScript>;
}

const SCRIPT_PATH = /\/accounts\/([^/]+)\/workers\/dispatch\/namespaces\/([^/]+)\/scripts\/([^/]+)$/;

/**
 * Cloudflare API gateway answers for requests that reach no script (as api.cloudflare.com answers them;
 * not in the published docs): 10000 "Authentication error" for a missing or wrong token, 7000 for a
 * path with no route, 7001 for a method the route lacks, 7003 for identifiers that name nothing.
 */
const AUTHENTICATION_ERROR: CloudflareRefusal = { status: 403, code: 10000, message: "Authentication error" };
const NO_ROUTE: CloudflareRefusal = { status: 404, code: 7000, message: "No route for that URI" };

/**
 * A local stand-in for Cloudflare's Workers for Platforms script-upload API
 * (`PUT …/accounts/{account}/workers/dispatch/namespaces/{ns}/scripts/{name}`): it reads the
 * multipart body as Cloudflare does, checks it against the contract (scriptUploadContract.ts),
 * starts it (`startScript`) and checks its exports, answers in Cloudflare's envelope, and keeps
 * what it accepts. A plain fetch handler, for Node
 * (`platform up`) and tests alike; everything it holds lives in memory.
 */
export function createScriptUploadStandIn(options: ScriptUploadStandInOptions): ScriptUploadStandIn {
  const accepted = new Map<string, AcceptedScript>();
  const now = options.now ?? Date.now;
  const latestCompatibilityDate = options.latestCompatibilityDate ?? COMPATIBILITY_DATE;
  const kvNamespaceIds = new Set(options.kvNamespaceIds ?? []);

  async function handle(request: Request): Promise<Response> {
    const match = SCRIPT_PATH.exec(new URL(request.url).pathname);
    if (!match) return cloudflareRefusal(NO_ROUTE);
    if (options.apiToken !== undefined && request.headers.get("authorization") !== `Bearer ${options.apiToken}`)
      return cloudflareRefusal(AUTHENTICATION_ERROR);
    const [account, namespace, name] = match.slice(1).map(decodeURIComponent) as [string, string, string];
    if (
      (options.accountId !== undefined && account !== options.accountId) ||
      (options.namespace !== undefined && namespace !== options.namespace)
    ) {
      return cloudflareRefusal({
        status: 404,
        code: 7003,
        message: `Could not route to ${new URL(request.url).pathname}, perhaps your object identifier is invalid?`,
      });
    }
    if (request.method !== "PUT")
      return cloudflareRefusal({ status: 405, code: 7001, message: "Method not allowed for this route" });

    const form = await readMultipart(request);
    if (!form) {
      return cloudflareRefusal({
        status: 400,
        code: 10021,
        message: `Uncaught SyntaxError: expected a multipart/form-data upload, got Content-Type ${request.headers.get("content-type") ?? "(none)"}`,
      });
    }
    const metadataPart = form.get("metadata");
    const metadataText =
      metadataPart === null ? null : typeof metadataPart === "string" ? metadataPart : await metadataPart.text();
    const modules = new Map<string, { contentType: string; content: Uint8Array }>();
    for (const [partName, value] of form) {
      if (partName === "metadata") continue;
      const blob = typeof value === "string" ? new Blob([value]) : value;
      modules.set(partName, { contentType: baseType(blob.type), content: new Uint8Array(await blob.arrayBuffer()) });
    }
    const parts: UploadedPart[] = [...modules].map(([partName, m]) => ({ name: partName, contentType: m.contentType }));
    const previous = accepted.get(name);
    const time = now();
    const verdict = checkScriptUpload(metadataText, parts, previous ?? null, {
      latestCompatibilityDate,
      today: new Date(time).toISOString().slice(0, 10),
      kvNamespaceIds,
    });
    if (!verdict.ok) return cloudflareRefusal(verdict.refusal);
    const startup = await options.startScript({
      name,
      mainModule: verdict.metadata.main_module!,
      modules: [...modules].map(([partName, m]) => ({ name: partName, ...m })),
      compatibilityDate: verdict.metadata.compatibility_date,
      compatibilityFlags: verdict.metadata.compatibility_flags,
    });
    if (!startup.started)
      return cloudflareRefusal({ status: 400, code: CLOUDFLARE_ERROR.scriptValidation, message: startup.error });
    const exportsRefusal = checkScriptExports(verdict.metadata, startup);
    if (exportsRefusal) return cloudflareRefusal(exportsRefusal);

    const at = new Date(time).toISOString();
    const script: AcceptedScript = {
      name,
      metadata: verdict.metadata,
      modules,
      migrationTag: verdict.state.migrationTag,
      durableObjectClasses: verdict.state.durableObjectClasses,
      etag: await etagOf(modules),
      createdOn: previous?.createdOn ?? at,
      modifiedOn: at,
    };
    accepted.set(name, script);
    await options.onAccepted?.(script);
    return cloudflareSuccess({
      id: name,
      etag: script.etag,
      created_on: script.createdOn,
      modified_on: script.modifiedOn,
      compatibility_date: verdict.metadata.compatibility_date,
      compatibility_flags: verdict.metadata.compatibility_flags ?? [],
      has_modules: true,
      ...(script.migrationTag ? { migration_tag: script.migrationTag } : {}),
      startup_time_ms: 0,
      usage_model: "standard",
    });
  }

  return { fetch: handle, scripts: () => accepted };
}

/** The body as form data, or null when it is not a readable multipart upload. */
async function readMultipart(request: Request): Promise<FormData | null> {
  if (!request.headers.get("content-type")?.toLowerCase().startsWith("multipart/form-data")) return null;
  try {
    return await request.formData();
  } catch {
    return null;
  }
}

/** `application/javascript+module; charset=utf-8` → `application/javascript+module`. */
function baseType(contentType: string): string {
  return contentType.split(";")[0]!.trim().toLowerCase();
}

/** Cloudflare's etag hashes the script's content; here SHA-256 over the modules in upload order. */
async function etagOf(modules: Map<string, { content: Uint8Array }>): Promise<string> {
  const all = [...modules.values()].map((m) => m.content);
  const bytes = new Uint8Array(all.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const content of all) {
    bytes.set(content, offset);
    offset += content.length;
  }
  const hash = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(hash)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
