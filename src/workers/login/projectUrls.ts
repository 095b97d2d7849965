import type { LoginEnv } from "./env.ts";
import type { SignInProject } from "./signInProject.ts";

/**
 * Where a project lives, derived from the registry and configuration only:
 * public `https://<slug>.<PLATFORM_DOMAIN>`, private
 * `https://<PLATFORM_DOMAIN>/<slug>`. `PROJECTS_BASE_URL` (local development)
 * replaces scheme, host and port, e.g. `http://localhost:8787`. No trailing slash.
 */
export function projectBaseUrl(env: LoginEnv, project: Pick<SignInProject, "slug" | "private">): string {
  const base = new URL(env.PROJECTS_BASE_URL || `https://${env.PLATFORM_DOMAIN}`);
  return project.private ? `${base.origin}/${project.slug}` : `${base.protocol}//${project.slug}.${base.host}`;
}

/** The project's callback, where the callback token is POSTed (never put in this URL). */
export function projectCallbackUrl(env: LoginEnv, project: Pick<SignInProject, "slug" | "private">): string {
  return `${projectBaseUrl(env, project)}/api/auth/callback`;
}

/** A page inside the project (`path` already validated as project-relative) with extra query parameters. */
export function projectPageUrl(
  env: LoginEnv,
  project: Pick<SignInProject, "slug" | "private">,
  path: string,
  query: Record<string, string> = {},
): string {
  const url = new URL(projectBaseUrl(env, project) + path);
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url.toString();
}
