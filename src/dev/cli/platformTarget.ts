import path from "node:path";
import { CliError } from "./commandLine.ts";
import { projectSlugFor } from "./dev/projectSlugFor.ts";
import { readDevSession, stateDirFor } from "./dev/devState.ts";

export interface PlatformTarget {
  apiUrl: string;
  token: string;
  slug: string;
}

/**
 * Which platform a project-scoped command talks to: the `platform dev`
 * running for `--dir` (default: the current directory), or `--api URL` with
 * the CLI token in $PLATFORM_TOKEN.
 */
export function resolvePlatformTarget(values: Record<string, string | boolean | undefined>): PlatformTarget {
  const projectDir = path.resolve((values.dir as string | undefined) ?? ".");
  const api = values.api as string | undefined;
  if (api) {
    const token = process.env.PLATFORM_TOKEN;
    if (!token) throw new CliError("--api needs a CLI token in $PLATFORM_TOKEN.");
    return { apiUrl: api.replace(/\/$/, ""), token, slug: projectSlugFor(projectDir) };
  }
  const session = readDevSession(stateDirFor(projectDir));
  if (!session) {
    throw new CliError(
      `No \`platform dev\` is running for ${projectDir}: start it, or pass --dir <project> or --api URL.`,
    );
  }
  return { apiUrl: session.apiUrl, token: session.cliToken, slug: session.slug };
}

/** Calls the API worker; a refusal becomes a one-line CliError carrying the API's own message. */
export async function callPlatformApi<T>(
  target: PlatformTarget,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch(target.apiUrl + pathname, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new CliError(`Cannot reach the platform API at ${target.apiUrl}: ${(error as Error).message}`);
  }
  const json = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  if (!response.ok) throw new CliError(json?.error?.message ?? `The platform API answered ${response.status}.`);
  return json as T;
}
