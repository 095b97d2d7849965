import { RESERVED_SLUGS } from "../../../workers/api/reservedSlugs.ts";
import { projectSlugFor } from "../dev/project/projectSlugFor.ts";

/**
 * The slug `platform push` deploys under: `--slug` as given (the API
 * validates it and refuses reserved names with its own message), else the
 * package.json name or folder name made slug-safe as `platform dev` does,
 * but without its renaming of reserved names (`support` → `app-support`):
 * the platform refuses those, and says so.
 */
export function pushSlugFor(projectDir: string, flag: string | undefined): string {
  if (flag !== undefined) return flag;
  const slug = projectSlugFor(projectDir);
  const renamed = /^app-(.+)$/.exec(slug)?.[1];
  return renamed && RESERVED_SLUGS.has(renamed) ? renamed : slug;
}
