import { PlatformError } from "../../../core/errors.ts";
import { type SourceMapJSON, isSourceMapJSON } from "../../../core/sourceMap.ts";
import { findProjectByScriptName } from "../../db/projectsTable.ts";
import type { ApiEnv } from "../env.ts";
import { requireOwnedProject } from "../projectRoutes.ts";
import type { CliRequest } from "../withCliUser.ts";
import type { NewLogEntry } from "./logEntry.ts";
import type { ProjectLog } from "./ProjectLog.ts";
import { MAX_LOG_READ, MAX_LOG_WAIT_MS } from "./ProjectLog.ts";
import { entriesFromTrace } from "./traceEntries.ts";

/** The log actor of one project (by id: a slug can be taken again by another project). */
export function projectLogOf(
  env: Pick<ApiEnv, "PROJECT_LOGS">,
  projectId: number,
): DurableObjectStub<ProjectLog> | null {
  if (!env.PROJECT_LOGS) return null;
  return env.PROJECT_LOGS.get(env.PROJECT_LOGS.idFromName(`project-${projectId}`));
}

/** The project's log actor, for a route that cannot do without one: `internal` when the platform keeps no logs. */
export function requireProjectLog(env: Pick<ApiEnv, "PROJECT_LOGS">, projectId: number): DurableObjectStub<ProjectLog> {
  const log = projectLogOf(env, projectId);
  if (!log) throw new PlatformError("internal", "This platform keeps no project logs (no PROJECT_LOGS binding).");
  return log;
}

/** A query parameter as an integer in [min, max], its default when absent; anything else is refused naming it. */
function intParam(url: URL, name: string, min: number, max: number, fallback: number | undefined): number | undefined {
  const text = url.searchParams.get(name);
  if (text === null) return fallback;
  const value = Number(text);
  if (!/^\d+$/.test(text) || value < min || value > max)
    throw new PlatformError(
      "invalid_input",
      `${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}.`,
    );
  return value;
}

/**
 * `GET /projects/:slug/logs?after=&limit=&waitMS=`: the
 * project's log, oldest first. Without `after`, the newest `limit` entries
 * (default 100); with it, those after it, waiting up to `waitMS` (at most
 * 25 s) for one to come. Answers `{ entries, cursor }`: pass `cursor` as
 * `after` to follow. Only the project's owner reads it; another project's
 * lines are in another actor, never in this answer.
 */
export async function readProjectLog(request: CliRequest, env: ApiEnv): Promise<Response> {
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const url = new URL(request.url);
  const after = intParam(url, "after", 0, Number.MAX_SAFE_INTEGER, undefined);
  const limit = intParam(url, "limit", 1, MAX_LOG_READ, 100)!;
  const waitMS = intParam(url, "waitMS", 0, MAX_LOG_WAIT_MS, 0)!;
  const answer = await requireProjectLog(env, project.id).read({
    ...(after === undefined ? {} : { after }),
    limit,
    waitMS,
  });
  return Response.json(answer, { headers: { "Cache-Control": "no-store" } });
}

/**
 * The API worker's Tail Worker handler: each project worker names it as its
 * tail consumer (its upload's `tail_consumers`; under `platform dev` its
 * `tails`), so the runtime hands it a trace of every invocation of that
 * worker. Each trace goes to the log of the project whose script it names:
 * the runtime's `scriptName` (deployed), or the script the local platform
 * wired the tail for (`props.scriptName`: workerd leaves `scriptName` empty).
 */
export async function recordTraces(env: ApiEnv, items: readonly TraceItem[], wiredScript?: string): Promise<void> {
  const byScript = new Map<string, TraceItem[]>();
  for (const item of items) {
    const script = item.scriptName ?? wiredScript;
    if (!script) continue;
    const traces = byScript.get(script);
    if (traces) traces.push(item);
    else byScript.set(script, [item]);
  }
  await Promise.all([...byScript].map(([script, traces]) => recordScriptTraces(env, script, traces)));
}

/**
 * The traces of one script's invocations, into the log of the project whose
 * script it is; dropped when it is no project's. The caller vouches for
 * `script` (the runtime, or `platform up`'s trace intake, which checks the
 * forwarder's token): a trace's own `scriptName` is not read here.
 */
export async function recordScriptTraces(
  env: Pick<ApiEnv, "DB" | "PROJECT_LOGS">,
  script: string,
  items: readonly TraceItem[],
): Promise<void> {
  const receivedAt = Date.now();
  const entries: NewLogEntry[] = items.flatMap((item) => entriesFromTrace(item, receivedAt));
  if (entries.length === 0) return;
  const project = await findProjectByScriptName(env.DB, script);
  if (project) await projectLogOf(env, project.id)?.append(entries);
}

/** The source map a push sends beside its bundle: a version-3 map, or nothing. */
export function sourceMapOf(value: unknown): SourceMapJSON | null {
  if (value === undefined || value === null) return null;
  if (!isSourceMapJSON(value))
    throw new PlatformError("invalid_input", "sourceMap must be a version 3 source map (version, sources, mappings).");
  return { version: 3, sources: value.sources, mappings: value.mappings };
}
