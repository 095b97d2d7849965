import { PlatformError } from "../../core/errors.ts";
import { PROJECT_DURABLE_OBJECTS } from "../../contracts/projectDurableObjects.ts";
import { projectScriptBindings } from "./projectScriptBindings.ts";

/**
 * What a project secret may be called and hold: the one rule for `platform
 * secret put` (checked by the API) and `.dev.vars` under `platform dev`.
 * Names are binding names as Cloudflare takes them (letters, digits and
 * underscores, not starting with a digit; at most 64 characters here);
 * values at most 5 KiB, Cloudflare's limit for one secret. Names that start
 * with `PLATFORM_` (in any case) are the platform's own, and so are the names
 * of the other bindings it gives every project (its plugins, its workflow
 * actors): a secret of that name would replace one.
 */
export const MAX_SECRET_NAME_LENGTH = 64;
export const MAX_SECRET_VALUE_BYTES = 5 * 1024;
/** Secrets of one project; with the platform's own bindings, well under Cloudflare's 128 per script. */
export const MAX_SECRETS_PER_PROJECT = 64;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The names of the bindings the platform gives a project, beyond its `PLATFORM_*` ones, read from
 * the one list of them (`projectScriptBindings`, with every project actor class), so a binding the
 * platform adds is reserved here too.
 */
export const RESERVED_BINDING_NAMES: ReadonlySet<string> = new Set(
  projectScriptBindings(
    { id: 0, slug: "x", script_name: "x", worker_secret: "x" },
    Object.keys(PROJECT_DURABLE_OBJECTS),
    "https://login.invalid",
    "v1",
  )
    .map((binding) => binding.name)
    .filter((name) => !/^PLATFORM_/i.test(name)),
);

export function checkSecretName(name: unknown): string {
  if (typeof name !== "string" || name.length === 0)
    throw new PlatformError("invalid_input", "A secret needs a name, e.g. API_KEY.");
  if (name.length > MAX_SECRET_NAME_LENGTH || !NAME.test(name))
    throw new PlatformError(
      "invalid_input",
      `${JSON.stringify(name.slice(0, 80))} is not a secret name: use letters, digits and underscores (not first), at most ${MAX_SECRET_NAME_LENGTH} characters, e.g. API_KEY.`,
    );
  if (/^PLATFORM_/i.test(name))
    throw new PlatformError(
      "invalid_input",
      `${name}: names starting with PLATFORM_ are the platform's own (PLATFORM_WORKER_SECRET, PLATFORM_PROJECT_ID, …); choose another name.`,
    );
  if (RESERVED_BINDING_NAMES.has(name))
    throw new PlatformError(
      "invalid_input",
      `${name} is a binding the platform gives every project (its plugins and its workflow actors: ${[...RESERVED_BINDING_NAMES].join(", ")}); a secret of that name would clash with it. Choose another name.`,
    );
  return name;
}

export function checkSecretValue(name: string, value: unknown): string {
  if (typeof value !== "string") throw new PlatformError("invalid_input", `The value of ${name} must be a string.`);
  if (value.length === 0)
    throw new PlatformError("invalid_input", `The value of ${name} is empty (pipe it on standard input).`);
  if (new TextEncoder().encode(value).byteLength > MAX_SECRET_VALUE_BYTES)
    throw new PlatformError(
      "payload_too_large",
      `The value of ${name} is over ${MAX_SECRET_VALUE_BYTES / 1024} KiB, the most one secret may hold.`,
    );
  return value;
}
