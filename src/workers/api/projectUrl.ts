import type { ApiEnv } from "./env.ts";

/**
 * Where a project is served, with a trailing slash: `https://<slug>.<PLATFORM_DOMAIN>/`, or
 * `https://<PLATFORM_DOMAIN>/<slug>/` for a private deployment. `PROJECTS_BASE_URL` (`platform up`:
 * http://localhost:N) replaces scheme, host and port, as for the login worker.
 */
export function projectUrlOf(
  env: Pick<ApiEnv, "PLATFORM_DOMAIN" | "PROJECTS_BASE_URL">,
  project: { slug: string; private: unknown },
): string {
  const base = new URL(env.PROJECTS_BASE_URL || `https://${env.PLATFORM_DOMAIN ?? "example.app"}`);
  return project.private ? `${base.origin}/${project.slug}/` : `${base.protocol}//${project.slug}.${base.host}/`;
}
