import { PlatformError } from "../../core/errors.ts";

/** A slug is a DNS label (it becomes `<slug>.<domain>`) and a path segment (`/<slug>/`); reserved names: reservedSlugs.ts. */
export function validateSlug(value: unknown): string {
  if (typeof value !== "string" || !/^[a-z][a-z0-9-]{1,38}[a-z0-9]$/.test(value) || value.includes("--")) {
    throw new PlatformError(
      "invalid_input",
      "slug must be 3–40 characters of lowercase letters, digits and single hyphens, starting with a letter.",
    );
  }
  return value;
}

export function scriptNameFor(slug: string): string {
  return `proj-${slug}`;
}
