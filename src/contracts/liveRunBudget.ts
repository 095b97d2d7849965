import { PlatformError } from "../core/errors.ts";

/**
 * The account's live-run budget on the wire: a project's worker asks the
 * platform for a slot per run before it starts runs, and gives the slots
 * back when they end, through identity-signed calls to the API worker
 * (`PLATFORM_API`). The account is the one that owns the project whose
 * worker secret signed the call, never one the body names.
 *
 * | route | body | answer |
 * |---|---|---|
 * | `POST /internal/workflow/live-runs/hold` | `{ runIds }` | 200 `{ held, live, cap }` (`held`: the ids it did not hold before), or 429 `rate_limited` and nothing held |
 * | `POST /internal/workflow/live-runs/release` | `{ runIds }` | 200 `{ released }` (ids it does not hold count 0) |
 */
export const LIVE_RUN_ROUTES = {
  hold: "/internal/workflow/live-runs/hold",
  release: "/internal/workflow/live-runs/release",
} as const;

/** Most run ids one call names: a step's largest fan-out (engine/control/children.ts MAX_CHILDREN). */
export const MAX_RUN_IDS_PER_CALL = 1000;

/** A run id as the platform accepts one (the execute route's rule). */
const RUN_ID = /^[A-Za-z0-9_-][A-Za-z0-9_.:-]{0,199}$/;

/** The body of either route: 1 to 1,000 distinct run ids; anything else is `invalid_input` naming the rule. */
export function runIdsOf(body: Record<string, unknown>): string[] {
  const { runIds } = body;
  if (!Array.isArray(runIds) || runIds.length === 0 || runIds.length > MAX_RUN_IDS_PER_CALL)
    throw new PlatformError("invalid_input", `runIds must be a list of 1 to ${MAX_RUN_IDS_PER_CALL} run ids.`);
  for (const [index, runId] of runIds.entries())
    if (typeof runId !== "string" || !RUN_ID.test(runId))
      throw new PlatformError("invalid_input", `runIds[${index}] must be a run id string.`);
  return [...new Set(runIds as string[])];
}
