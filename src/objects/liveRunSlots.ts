import { LIVE_RUN_ROUTES, MAX_RUN_IDS_PER_CALL } from "../contracts/liveRunBudget.ts";
import { PlatformError } from "../core/errors.ts";
import { IDENTITY_HEADER, signRequestToken } from "../core/requestToken.ts";

/**
 * A project's side of its account's live-run budget: a slot per run before
 * it starts, given back once it has ended. The count, the cap and the
 * account are the platform's (the API worker's `LiveRunBudget` actor); this
 * only asks.
 */
export interface LiveRunSlots {
  /**
   * Holds a slot for each run, all or none; past the budget throws `rate_limited` naming the cap.
   * Answers the ids it did not hold before: a start that then makes no run of such an id gives it back.
   */
  hold(runIds: readonly string[]): Promise<string[]>;
  /** Gives back the slots of runs that ended (any number of ids; one not held frees nothing). */
  release(runIds: readonly string[]): Promise<void>;
}

/** The bindings the calls need (every project worker the platform uploads has them). */
export interface LiveRunSlotsEnv {
  readonly PLATFORM_API?: unknown;
  readonly PLATFORM_WORKER_SECRET?: unknown;
  readonly PLATFORM_PROJECT_ID?: unknown;
  readonly [binding: string]: unknown;
}

/** Nothing to ask: a worker with no platform to ask (the test kit's, the workerd tests' own). */
const UNCOUNTED: LiveRunSlots = { hold: async () => [], release: async () => {} };

/** The slots of the account of the project whose bindings `env` holds, through identity-signed calls to `PLATFORM_API`. */
export function platformLiveRunSlots(env: LiveRunSlotsEnv): LiveRunSlots {
  const api = env.PLATFORM_API as { fetch(url: string, init: RequestInit): Promise<Response> } | undefined;
  const secret = env.PLATFORM_WORKER_SECRET;
  const projectId = env.PLATFORM_PROJECT_ID;
  if (!api || typeof secret !== "string" || typeof projectId !== "string") return UNCOUNTED;
  const post = async (path: string, runIds: readonly string[]) => {
    const body = JSON.stringify({ runIds });
    const response = await api.fetch(`https://platform.internal${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [IDENTITY_HEADER]: await signRequestToken(
          "identity",
          {
            method: "POST",
            pathAndQuery: path,
            body,
          },
          { projectId, secret },
        ),
      },
      body,
    });
    if (response.ok) return (await response.json()) as { held?: string[] };
    const text = await response.text();
    let error: unknown = null;
    try {
      error = (JSON.parse(text) as { error?: unknown }).error;
    } catch {}
    throw PlatformError.fromJSON(error, {
      code: "upstream_error",
      message: `The platform answered ${response.status} to ${path}: ${text.slice(0, 200)}`,
    });
  };
  return {
    async hold(runIds) {
      if (runIds.length === 0) return [];
      return (await post(LIVE_RUN_ROUTES.hold, runIds)).held ?? [];
    },
    async release(runIds) {
      for (let from = 0; from < runIds.length; from += MAX_RUN_IDS_PER_CALL)
        await post(LIVE_RUN_ROUTES.release, runIds.slice(from, from + MAX_RUN_IDS_PER_CALL));
    },
  };
}
