import { PlatformError } from "../../core/errors.ts";

/** Names the platform itself answers on; a project cannot take them. */
const RESERVED = new Set(["api", "www", "login", "console", "admin", "platform", "internal", "plugins", "static"]);

/** A slug is a DNS label (it becomes `<slug>.<domain>`) and a path segment (`/<slug>/`). */
export function validateSlug(value: unknown): string {
  if (typeof value !== "string" || !/^[a-z][a-z0-9-]{1,38}[a-z0-9]$/.test(value) || value.includes("--")) {
    throw new PlatformError(
      "invalid_input",
      "slug must be 3–40 characters of lowercase letters, digits and single hyphens, starting with a letter.",
    );
  }
  if (RESERVED.has(value)) throw new PlatformError("invalid_input", `slug "${value}" is reserved by the platform.`);
  return value;
}

export function scriptNameFor(slug: string): string {
  return `proj-${slug}`;
}
