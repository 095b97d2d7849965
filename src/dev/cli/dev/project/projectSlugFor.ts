import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { RESERVED_SLUGS } from "../../../../workers/api/reservedSlugs.ts";

/**
 * The slug a local project runs under: its package.json name or its folder
 * name, made slug-safe; a reserved name gets `app-` in front, since the local
 * API creates projects under the same slug rules as a deployed one.
 */
export function projectSlugFor(projectDir: string): string {
  let name = path.basename(projectDir);
  const pkgPath = path.join(projectDir, "package.json");
  if (existsSync(pkgPath)) {
    try {
      const pkg = JSON.parse(readFileSync(pkgPath, "utf8")) as { name?: unknown };
      if (typeof pkg.name === "string" && pkg.name) name = pkg.name.replace(/^@[^/]+\//, "");
    } catch {
      // An unreadable package.json falls back to the folder name.
    }
  }
  let slug = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/-+/g, "-")
    .replace(/^[^a-z]+/, "")
    .replace(/-+$/, "")
    .slice(0, 40)
    .replace(/-+$/, "");
  if (slug.length < 3) slug = `app-${slug || "x"}`.replace(/-+$/, "").padEnd(3, "x");
  // A folder named like a reserved slug (`support`, `api`) still runs locally, as `app-<name>`.
  if (RESERVED_SLUGS.has(slug)) slug = `app-${slug}`;
  return slug;
}
