import { CliError } from "./commandLine.ts";
import { pushSlugFor } from "./deploy/pushSlug.ts";
import { projectSlugFor } from "./dev/project/projectSlugFor.ts";
import { readDevSession, stateDirFor } from "./dev/state/devState.ts";
import { credentialsPath, normalizeApiUrl, readCredentials } from "./credentials/credentialsFile.ts";
import { projectFolder } from "./projectFolder.ts";

export interface PlatformTarget {
  apiUrl: string;
  token: string;
  slug: string;
}

/** The platform API a command talks to, and the CLI token it has there (null when not logged in). */
export interface PlatformApi {
  apiUrl: string;
  token: string | null;
  /** Where the token came from, for messages. */
  source: "PLATFORM_TOKEN" | "login" | null;
}

/**
 * `--api URL`, else $PLATFORM_API_URL, else the API of the last `platform
 * login`; the token is $PLATFORM_TOKEN when set (CI), else the one stored
 * for that URL. Null when no API is named anywhere.
 */
export function resolvePlatformApi(
  api: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  file: string = credentialsPath(env),
): PlatformApi | null {
  const credentials = readCredentials(file);
  const named = api || env.PLATFORM_API_URL || credentials.current;
  if (!named) return null;
  let apiUrl: string;
  try {
    apiUrl = normalizeApiUrl(named);
  } catch (error) {
    throw new CliError((error as Error).message, 2);
  }
  if (env.PLATFORM_TOKEN) return { apiUrl, token: env.PLATFORM_TOKEN, source: "PLATFORM_TOKEN" };
  const stored = credentials.logins[apiUrl];
  return { apiUrl, token: stored?.token ?? null, source: stored ? "login" : null };
}

/** The CLI token for `api`, or a CliError saying how to log in there. */
export function loggedInToken(api: PlatformApi): string {
  if (!api.token)
    throw new CliError(
      `Not logged in to ${api.apiUrl}: run \`platform login --api ${api.apiUrl}\` (or set $PLATFORM_TOKEN).`,
    );
  return api.token;
}

/**
 * Which platform a project-scoped command talks to: the `platform dev`
 * running for `--dir` (default: the current directory), or `--api URL` with
 * the CLI token in $PLATFORM_TOKEN or from `platform login`.
 */
export function resolvePlatformTarget(values: Record<string, string | boolean | undefined>): PlatformTarget {
  const projectDir = projectFolder(values.dir as string | undefined);
  const api = values.api as string | undefined;
  if (api) {
    const resolved = resolvePlatformApi(api)!;
    return { apiUrl: resolved.apiUrl, token: loggedInToken(resolved), slug: projectSlugFor(projectDir) };
  }
  const session = readDevSession(stateDirFor(projectDir));
  if (!session) {
    throw new CliError(
      `No \`platform dev\` is running for ${projectDir}: start it, or pass --dir <project> or --api URL.`,
    );
  }
  return { apiUrl: session.apiUrl, token: session.cliToken, slug: session.slug };
}

/**
 * A project-scoped command that reads what runs (its log, its webhook
 * deliveries) works both locally and after a push: with --api or --slug, the
 * pushed project; else the `platform dev` running for --dir, else (when a
 * platform is known from $PLATFORM_API_URL or `platform login`) the project
 * `platform push` deploys from --dir.
 */
export function resolveProjectTarget(values: Record<string, string | boolean | undefined>): PlatformTarget {
  if (values.api !== undefined || values.slug !== undefined) return resolvePushedTarget(values, "");
  const dir = projectFolder(values.dir as string | undefined);
  const session = readDevSession(stateDirFor(dir));
  if (session) return { apiUrl: session.apiUrl, token: session.cliToken, slug: session.slug };
  if (resolvePlatformApi(undefined)) return resolvePushedTarget(values, "");
  throw new CliError(
    `No \`platform dev\` is running for ${dir}, and no platform is named: start it, or pass --api URL (and --slug S).`,
  );
}

/**
 * The deployed project a command acts on, as `platform push` names it: the
 * API of `--api URL` (else $PLATFORM_API_URL, else the last `platform
 * login`) with its CLI token, and the slug `--slug` (else the one `push`
 * derives from `--dir`, default the current directory). `instead` says what
 * to do when no platform is named (e.g. where `platform dev` reads the same).
 */
export function resolvePushedTarget(
  values: Record<string, string | boolean | undefined>,
  instead: string,
): PlatformTarget {
  if (values.slug !== undefined && values.dir !== undefined)
    throw new CliError("Name the project by --dir or by --slug, not both.", 2);
  if (values.slug === "") throw new CliError("--slug must not be empty.", 2);
  const api = resolvePlatformApi(values.api as string | undefined);
  if (!api) throw new CliError(`Which platform? Pass --api URL or run \`platform login --api URL\` first. ${instead}`);
  const token = loggedInToken(api);
  const slug = pushSlugFor(projectFolder(values.dir as string | undefined), values.slug as string | undefined);
  return { apiUrl: api.apiUrl, token, slug };
}

/** The API worker's JSON answer; `{}` when the body is not JSON. */
export type PlatformApiAnswer = Record<string, unknown> & {
  error?: { code?: string; message?: string; details?: unknown };
};

/** Calls the API worker and hands back its answer, refusals included; only an unreachable API throws. */
export async function requestPlatformApi(
  target: PlatformTarget,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<{ status: number; ok: boolean; json: PlatformApiAnswer }> {
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
  const json = (await response.json().catch(() => ({}))) as PlatformApiAnswer;
  return { status: response.status, ok: response.ok, json };
}

/** Calls the API worker; a refusal becomes a one-line CliError carrying the API's own message. */
export async function callPlatformApi<T>(
  target: PlatformTarget,
  method: string,
  pathname: string,
  body?: unknown,
): Promise<T> {
  const { status, ok, json } = await requestPlatformApi(target, method, pathname, body);
  if (!ok) throw new CliError(json.error?.message ?? `The platform API answered ${status}.`);
  return json as T;
}
