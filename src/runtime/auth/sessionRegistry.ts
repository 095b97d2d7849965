import { SESSION_ROUTES, type SessionGrant } from "../../contracts/signInSessions.ts";
import { PlatformError } from "../../core/errors.ts";
import type { AuthProject } from "./authSite.ts";
import { postToPlatform } from "./platformAuthCall.ts";

/**
 * Where a project's sign-in sessions are recorded: the platform (D1
 * `project_sessions`, through the API worker; deployed, `platform dev`,
 * `platform up`), or, under `platform dev --node` (no platform), this
 * process, whose sessions end with it anyway. Every method throws a
 * `not_ready` PlatformError when the platform cannot be asked.
 */
export interface SessionRegistry {
  /** Records a freshly minted session; `full` when the project is at its cap of live sessions. */
  start(grant: SessionGrant): Promise<"started" | "full">;
  /** Recorded and unexpired. */
  isActive(sid: string): Promise<boolean>;
  /** Ends these sessions (sign-out); how many there were. */
  end(sids: readonly string[]): Promise<number>;
  /** Ends every session of the user (`auth.signOutEverywhere`); how many there were. */
  endUser(userKey: string): Promise<number>;
}

export function sessionRegistryFor(project: AuthProject): SessionRegistry {
  if (project.platformApi) return platformRegistry(project);
  if (project.local) return processRegistry;
  return unavailableRegistry;
}

function unavailable(what: string, detail: string): PlatformError {
  return new PlatformError("not_ready", `The platform could not ${what} (${detail}); try again in a moment.`);
}

/** The platform's answer; a 200's JSON, `full` for 403 (the project's cap of live sessions), else `not_ready`. */
async function answer<T>(project: AuthProject, path: string, payload: unknown, what: string): Promise<T | "full"> {
  let response: Response;
  try {
    response = await postToPlatform(project, path, payload);
  } catch (error) {
    throw unavailable(what, error instanceof Error ? error.message : String(error));
  }
  if (response.status === 200) return (await response.json()) as T;
  await response.body?.cancel();
  if (response.status === 403) return "full";
  throw unavailable(what, `${path} answered ${response.status}`);
}

async function counted(project: AuthProject, path: string, payload: unknown, what: string): Promise<number> {
  const result = await answer<{ ended: unknown }>(project, path, payload, what);
  if (result === "full" || typeof result.ended !== "number") throw unavailable(what, `${path} answered unexpectedly`);
  return result.ended;
}

function platformRegistry(project: AuthProject): SessionRegistry {
  return {
    async start(grant) {
      const result = await answer(project, SESSION_ROUTES.start, { session: grant }, "record the session");
      return result === "full" ? "full" : "started";
    },
    async isActive(sid) {
      const result = await answer<{ active: unknown }>(project, SESSION_ROUTES.check, { sid }, "check the session");
      return result !== "full" && result.active === true;
    },
    end: (sids) => counted(project, SESSION_ROUTES.end, { sids }, "end the session"),
    endUser: (user) => counted(project, SESSION_ROUTES.endUser, { user }, "end the user's sessions"),
  };
}

/** `platform dev --node`: this process is the whole platform. */
const processSessions = new Map<string, SessionGrant>();
const processRegistry: SessionRegistry = {
  async start(grant) {
    processSessions.set(grant.sid, grant);
    return "started";
  },
  async isActive(sid) {
    const grant = processSessions.get(sid);
    return grant !== undefined && grant.exp > Date.now() / 1000;
  },
  async end(sids) {
    return sids.filter((sid) => processSessions.delete(sid)).length;
  },
  async endUser(user) {
    let ended = 0;
    for (const [sid, grant] of processSessions) if (grant.user === user && processSessions.delete(sid)) ended++;
    return ended;
  },
};

const noBinding = () =>
  Promise.reject(unavailable("reach its session records", "this project worker has no PLATFORM_API binding"));
const unavailableRegistry: SessionRegistry = {
  start: noBinding,
  isActive: noBinding,
  end: noBinding,
  endUser: noBinding,
};
