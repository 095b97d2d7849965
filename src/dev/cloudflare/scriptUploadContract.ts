import type { ScriptUpdateParams } from "cloudflare/resources/workers-for-platforms/dispatch/namespaces/scripts/scripts";
import type { MigrationStepParam } from "cloudflare/resources/workers/workers";
import type { CloudflareRefusal } from "./cloudflareApiEnvelope.ts";

/**
 * The rules Cloudflare applies to a Workers for Platforms script upload (the metadata part of
 * `PUT /accounts/{account}/workers/dispatch/namespaces/{ns}/scripts/{name}`), derived from the
 * `cloudflare` SDK's types (generated from Cloudflare's OpenAPI document) and the docs their comments
 * link: developers.cloudflare.com/workers/configuration/multipart-upload-metadata/ and the Durable
 * Objects migrations page. Tables below are typed against the SDK, so a new SDK field or binding
 * kind fails the typecheck until it is listed here.
 */
type Metadata = ScriptUpdateParams.Metadata;
type Binding = NonNullable<Metadata["bindings"]>[number];
type BindingType = Binding["type"];

/**
 * Error codes, each as Cloudflare answers it:
 * - 10021, script validation: the code for a body or script the API cannot accept
 *   ("could not read content for part metadata", cloudflare/cloudflare-typescript#158); Cloudflare
 *   publishes no narrower code for the metadata rules, so every metadata rule below uses it.
 *   It is also the code of a script that does not start: "Uncaught SyntaxError: Unexpected token '<'
 *   at …" (cloudflare/workers-sdk#6657), "No such compatibility flag: …" (cloudflare/workerd#5861).
 * - 10061: "Cannot create binding for class … because it is not currently configured to implement
 *   Durable Objects" (cloudflare/workers-sdk#10246, #10034), and "Cannot create binding for class …
 *   that is not exported by the script" (cloudflare/workers-sdk#1792).
 * - 10068: "The uploaded script has no registered event handlers." (cloudflare/workers-sdk#2767).
 * - 10070: "Cannot apply new-class migration to class … that is not exported by script"
 *   (cloudflare/workers-sdk#4943).
 * - 10074: a new-class migration for a class that already exists (reported on replayed migrations).
 * - 10079: "Migration tag precondition failed; current tag is …" (cloudflare/workers-sdk#705, #6953).
 * - 10042: "KV namespace '…' is not valid. Please verify the namespace_id in your configuration."
 *   (cloudflare/workers-sdk#14249): a kv_namespace binding naming no namespace of the account.
 */
export const CLOUDFLARE_ERROR = {
  scriptValidation: 10021,
  durableObjectBinding: 10061,
  noEventHandlers: 10068,
  migrationClassNotExported: 10070,
  classAlreadyExists: 10074,
  migrationTagPrecondition: 10079,
  kvNamespaceNotValid: 10042,
} as const;

/** Cloudflare keeps at most this many tags on a script (Workers for Platforms, "Tags"). */
export const MAX_SCRIPT_TAGS = 8;

/** Every top-level metadata field the API knows; anything else is refused. */
const METADATA_FIELDS: Record<keyof Metadata, true> = {
  assets: true,
  bindings: true,
  body_part: true,
  cache_options: true,
  compatibility_date: true,
  compatibility_flags: true,
  exports: true,
  keep_assets: true,
  keep_bindings: true,
  limits: true,
  logpush: true,
  main_module: true,
  migrations: true,
  observability: true,
  package_dependencies: true,
  placement: true,
  tags: true,
  tail_consumers: true,
  usage_model: true,
};

/** Each binding kind and its required fields besides `name` and `type` (the SDK's non-optional ones). */
const BINDING_REQUIRED_FIELDS: Record<BindingType, readonly string[]> = {
  ai: [],
  ai_search: ["instance_name"],
  ai_search_namespace: ["namespace"],
  messaging: ["namespace"],
  analytics_engine: ["dataset"],
  artifacts: ["namespace"],
  assets: [],
  browser: [],
  d1: ["database_id"],
  data_blob: ["part"],
  dispatch_namespace: ["namespace"],
  // The SDK marks class_name optional because `namespace_id` may name the namespace instead; one is required.
  durable_object_namespace: [],
  hyperdrive: ["id"],
  inherit: [],
  images: [],
  json: ["json"],
  kv_namespace: ["namespace_id"],
  media: [],
  mtls_certificate: ["certificate_id"],
  plain_text: ["text"],
  pipelines: ["pipeline"],
  k2: ["stream"],
  queue: ["queue_name"],
  ratelimit: ["namespace_id", "simple"],
  r2_bucket: ["bucket_name"],
  secret_text: ["text"],
  send_email: [],
  service: ["service"],
  text_blob: ["part"],
  vectorize: ["index_name"],
  version_metadata: [],
  secrets_store_secret: ["secret_name", "store_id"],
  flagship: ["app_id"],
  secret_key: ["algorithm", "format", "usages"],
  workflow: ["workflow_name"],
  wasm_module: ["part"],
  vpc_service: ["service_id"],
  vpc_network: [],
};

/** Module Content-Types the API accepts (the SDK's `files` doc); the main module must be an ES module. */
const MODULE_TYPES = new Set([
  "application/javascript+module",
  "text/javascript+module",
  "application/javascript",
  "text/javascript",
  "text/x-python",
  "text/x-python-requirement",
  "application/wasm",
  "text/plain",
  "application/octet-stream",
  "application/source-map",
]);
const ES_MODULE_TYPES = new Set(["application/javascript+module", "text/javascript+module"]);

/** Binding names become JavaScript property names on `env`. */
const BINDING_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const COMPATIBILITY_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** What Cloudflare already holds for the script, from its last accepted upload. */
export interface ScriptState {
  migrationTag: string | null;
  durableObjectClasses: string[];
}

export interface UploadedPart {
  name: string;
  contentType: string;
}

export interface ContractLimits {
  /** The newest compatibility date the runtime supports (workerd 1.20261023.1: 2026-10-30). */
  latestCompatibilityDate: string;
  /** Today (UTC, YYYY-MM-DD): Cloudflare refuses a compatibility date in the future. */
  today: string;
  /** The account's KV namespace ids: a kv_namespace binding must name one. */
  kvNamespaceIds: ReadonlySet<string>;
}

export type ContractVerdict =
  | { ok: true; metadata: Metadata; state: ScriptState }
  | { ok: false; refusal: CloudflareRefusal };

class Refused extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

function refuse(code: number, message: string): never {
  throw new Refused(code, message);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === "string");

/** Checks an upload's metadata part (as text) and its other parts against the contract. */
export function checkScriptUpload(
  metadataText: string | null,
  parts: UploadedPart[],
  current: ScriptState | null,
  limits: ContractLimits,
): ContractVerdict {
  try {
    const metadata = parseMetadata(metadataText);
    checkModules(metadata, parts);
    checkCompatibility(metadata, limits);
    checkTags(metadata.tags);
    const bindings = checkBindings(metadata.bindings, limits.kvNamespaceIds);
    const state = applyMigrations(metadata.migrations, {
      migrationTag: current?.migrationTag ?? null,
      durableObjectClasses: [...(current?.durableObjectClasses ?? [])],
    });
    checkDurableObjectBindings(bindings, state.durableObjectClasses);
    return { ok: true, metadata, state };
  } catch (error) {
    if (!(error instanceof Refused)) throw error;
    return { ok: false, refusal: { status: 400, code: error.code, message: error.message } };
  }
}

function parseMetadata(text: string | null): Metadata {
  const { scriptValidation } = CLOUDFLARE_ERROR;
  if (text === null) refuse(scriptValidation, "could not read content for part metadata");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    refuse(scriptValidation, "metadata part is not valid JSON");
  }
  if (!isObject(parsed)) refuse(scriptValidation, "metadata must be a JSON object");
  for (const field of Object.keys(parsed)) {
    if (!Object.hasOwn(METADATA_FIELDS, field)) refuse(scriptValidation, `metadata has an unknown field '${field}'`);
  }
  return parsed as Metadata;
}

function checkModules(metadata: Metadata, parts: UploadedPart[]): void {
  const { scriptValidation } = CLOUDFLARE_ERROR;
  if (metadata.body_part !== undefined)
    refuse(scriptValidation, "body_part (service-worker syntax) cannot be uploaded to a dispatch namespace here");
  if (typeof metadata.main_module !== "string" || metadata.main_module === "")
    refuse(scriptValidation, "metadata.main_module is required: name the part that holds the Worker's main module");
  for (const part of parts) {
    if (!MODULE_TYPES.has(part.contentType))
      refuse(scriptValidation, `module ${part.name} has unsupported Content-Type ${part.contentType || "(none)"}`);
  }
  const main = parts.find((p) => p.name === metadata.main_module);
  if (!main) refuse(scriptValidation, `No such module "${metadata.main_module}": main_module names no uploaded part`);
  if (!ES_MODULE_TYPES.has(main.contentType))
    refuse(scriptValidation, `main module ${main.name} must be an ES module (application/javascript+module)`);
}

function checkCompatibility(metadata: Metadata, limits: ContractLimits): void {
  const { scriptValidation } = CLOUDFLARE_ERROR;
  const date = metadata.compatibility_date;
  if (date !== undefined) {
    if (typeof date !== "string" || !isCalendarDate(date))
      refuse(scriptValidation, `compatibility_date must be a calendar date as YYYY-MM-DD, got ${JSON.stringify(date)}`);
    if (date > limits.today) refuse(scriptValidation, `Can't set compatibility date in the future: ${date}`);
    if (date > limits.latestCompatibilityDate)
      refuse(
        scriptValidation,
        `compatibility_date ${date} is newer than the runtime supports (${limits.latestCompatibilityDate})`,
      );
  }
  // Whether each flag exists is the runtime's to say: starting the script refuses an unknown one (ScriptStarter).
  const flags = metadata.compatibility_flags;
  if (flags !== undefined && !isStringArray(flags))
    refuse(scriptValidation, "compatibility_flags must be an array of strings");
}

/** `2026-02-30` has the shape but names no day. */
function isCalendarDate(text: string): boolean {
  const match = COMPATIBILITY_DATE.exec(text);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

function checkTags(tags: unknown): void {
  const { scriptValidation } = CLOUDFLARE_ERROR;
  if (tags === undefined || tags === null) return;
  if (!isStringArray(tags)) refuse(scriptValidation, "metadata.tags must be an array of strings");
  if (tags.length > MAX_SCRIPT_TAGS)
    refuse(scriptValidation, `a script takes at most ${MAX_SCRIPT_TAGS} tags, got ${tags.length}`);
}

function checkBindings(bindings: unknown, kvNamespaceIds: ReadonlySet<string>): Binding[] {
  const { scriptValidation } = CLOUDFLARE_ERROR;
  if (bindings === undefined) return [];
  if (!Array.isArray(bindings)) refuse(scriptValidation, "metadata.bindings must be an array");
  const names = new Set<string>();
  for (const binding of bindings) {
    if (!isObject(binding) || typeof binding.type !== "string" || typeof binding.name !== "string")
      refuse(scriptValidation, "each binding needs a string name and type");
    const { type, name } = binding;
    if (!Object.hasOwn(BINDING_REQUIRED_FIELDS, type))
      refuse(scriptValidation, `binding ${name} has an unknown type '${type}'`);
    if (!BINDING_NAME.test(name))
      refuse(scriptValidation, `binding name '${name}' is not a valid JavaScript identifier`);
    if (names.has(name)) refuse(scriptValidation, `binding name '${name}' is used more than once`);
    names.add(name);
    for (const field of BINDING_REQUIRED_FIELDS[type as BindingType]) {
      if (binding[field] === undefined || binding[field] === null)
        refuse(scriptValidation, `${type} binding ${name} needs '${field}'`);
    }
    for (const field of ["service", "text", "class_name", "script_name"]) {
      if (binding[field] !== undefined && typeof binding[field] !== "string")
        refuse(scriptValidation, `binding ${name}: '${field}' must be a string`);
    }
    if (type === "durable_object_namespace" && binding.class_name === undefined && binding.namespace_id === undefined)
      refuse(scriptValidation, `durable_object_namespace binding ${name} needs 'class_name'`);
    if (type === "kv_namespace" && !kvNamespaceIds.has(String(binding.namespace_id)))
      refuse(
        CLOUDFLARE_ERROR.kvNamespaceNotValid,
        `KV namespace '${String(binding.namespace_id)}' is not valid. Please verify the namespace_id in your configuration.`,
      );
  }
  return bindings as Binding[];
}

/** Replays the upload's migration on what the script has, as Cloudflare applies tagged migrations. */
function applyMigrations(migrations: unknown, current: ScriptState): ScriptState {
  if (migrations === undefined) return current;
  const { scriptValidation, migrationTagPrecondition } = CLOUDFLARE_ERROR;
  if (!isObject(migrations)) refuse(scriptValidation, "metadata.migrations must be an object");
  const { old_tag: oldTag = null, new_tag: newTag } = migrations;
  if (oldTag !== current.migrationTag)
    refuse(
      migrationTagPrecondition,
      `Migration tag precondition failed; current tag is '${current.migrationTag ?? ""}'`,
    );
  if (newTag !== undefined && (typeof newTag !== "string" || newTag === ""))
    refuse(scriptValidation, "migrations.new_tag must be a non-empty string");
  // A single-step migration carries its step's fields itself; a multi-step one lists them in `steps`.
  const steps = "steps" in migrations ? migrations.steps : [migrations];
  if (!Array.isArray(steps)) refuse(scriptValidation, "migrations.steps must be an array");
  const classes = new Set(current.durableObjectClasses);
  for (const step of steps) applyMigrationStep(step, classes);
  return { migrationTag: newTag ?? current.migrationTag, durableObjectClasses: [...classes] };
}

/** The class names a step lists under `field`, checked to be a list of strings. */
function classList(step: Record<string, unknown>, field: keyof MigrationStepParam): string[] {
  const list = step[field] ?? [];
  if (!isStringArray(list))
    refuse(CLOUDFLARE_ERROR.scriptValidation, `migrations.${field} must be an array of class names`);
  return list;
}

/** `{ from, to }` pairs of a rename or transfer step. */
function classMoves(step: Record<string, unknown>, field: keyof MigrationStepParam): { from: unknown; to: string }[] {
  const list = step[field] ?? [];
  if (!Array.isArray(list) || !list.every((m) => isObject(m) && typeof m.to === "string"))
    refuse(CLOUDFLARE_ERROR.scriptValidation, `migrations.${field} entries need 'from' and 'to'`);
  return list as { from: unknown; to: string }[];
}

function applyMigrationStep(step: unknown, classes: Set<string>): void {
  const { scriptValidation, classAlreadyExists, durableObjectBinding } = CLOUDFLARE_ERROR;
  if (!isObject(step)) refuse(scriptValidation, "each migration step must be an object");
  for (const [field, kind] of [
    ["new_classes", "new-class"],
    ["new_sqlite_classes", "new-sqlite-class"],
  ] as const) {
    for (const name of classList(step, field)) {
      if (classes.has(name))
        refuse(classAlreadyExists, `Cannot apply --${kind} migration to class '${name}' that already exists`);
      classes.add(name);
    }
  }
  for (const { from, to } of classMoves(step, "renamed_classes")) {
    if (typeof from !== "string" || !classes.has(from))
      refuse(durableObjectBinding, `Cannot apply --rename-class migration to non-existent class '${String(from)}'`);
    if (classes.has(to))
      refuse(classAlreadyExists, `Cannot apply --rename-class migration to class '${to}' that already exists`);
    classes.delete(from);
    classes.add(to);
  }
  for (const { to } of classMoves(step, "transferred_classes")) classes.add(to);
  for (const name of classList(step, "deleted_classes")) {
    if (!classes.delete(name))
      refuse(durableObjectBinding, `Cannot apply --delete-class migration to non-existent class '${name}'`);
  }
}

/** A binding to a class of this script (no `script_name`) needs that class declared by a migration, now or earlier. */
function checkDurableObjectBindings(bindings: Binding[], classes: string[]): void {
  for (const binding of bindings) {
    if (binding.type !== "durable_object_namespace" || binding.script_name || binding.namespace_id) continue;
    if (!classes.includes(binding.class_name!))
      refuse(
        CLOUDFLARE_ERROR.durableObjectBinding,
        `Cannot create binding for class '${binding.class_name}' because it is not currently configured to implement Durable Objects. Ensure a --new-class migration has been applied to it.`,
      );
  }
}

/** What the runtime saw of a started script's main module (see scriptStartup.ts). */
export interface MainModuleExports {
  /** Every export by name, and whether it is a class (a function: what a Durable Object or entrypoint must be). */
  exports: Record<string, "class" | "value">;
  /** The event handlers its default export registers (`fetch`, `scheduled`, `queue`, …). */
  handlers: string[];
}

/**
 * The checks Cloudflare makes once the script started: it registers some
 * event handler or exports some class, every class a migration brings in is
 * exported, and every Durable Object binding to this script names an exported class.
 */
export function checkScriptExports(metadata: Metadata, main: MainModuleExports): CloudflareRefusal | null {
  const isClass = (name: string) => main.exports[name] === "class";
  const { noEventHandlers, migrationClassNotExported, durableObjectBinding } = CLOUDFLARE_ERROR;
  const refusal = (code: number, message: string): CloudflareRefusal => ({ status: 400, code, message });
  if (main.handlers.length === 0 && !Object.values(main.exports).includes("class"))
    return refusal(noEventHandlers, "The uploaded script has no registered event handlers.");
  for (const [kind, name] of migratedClasses(metadata.migrations)) {
    if (!isClass(name))
      return refusal(
        migrationClassNotExported,
        `Cannot apply ${kind} migration to class '${name}' that is not exported by script`,
      );
  }
  for (const binding of metadata.bindings ?? []) {
    if (binding.type !== "durable_object_namespace" || binding.script_name || !binding.class_name) continue;
    if (!isClass(binding.class_name))
      return refusal(
        durableObjectBinding,
        `Cannot create binding for class '${binding.class_name}' that is not exported by the script`,
      );
  }
  return null;
}

/** The classes a (checked) migration creates or moves in, each with its kind as Cloudflare names it. */
function migratedClasses(migrations: Metadata["migrations"]): [string, string][] {
  if (!migrations) return [];
  const steps = ("steps" in migrations ? migrations.steps : [migrations]) as MigrationStepParam[];
  return steps.flatMap((step) => [
    ...(step.new_classes ?? []).map((name) => ["new-class", name] as [string, string]),
    ...(step.new_sqlite_classes ?? []).map((name) => ["new-sqlite-class", name] as [string, string]),
    ...(step.renamed_classes ?? []).map(({ to }) => ["rename-class", to!] as [string, string]),
    ...(step.transferred_classes ?? []).map(({ to }) => ["transfer-class", to!] as [string, string]),
  ]);
}
