import type { PluginDelivery } from "../../contracts/pluginDelivery.ts";
import { releaseEvent } from "../../workers/db/eventDedupe.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { deliverToProject } from "./deliverToProject.ts";
import type { PluginEnv } from "./pluginEnv.ts";

/** An event a plugin claimed (deduplicated on `dedupeKey`) and now delivers to its project. */
export interface ClaimedEvent {
  project: Pick<ProjectRow, "id" | "slug" | "script_name" | "worker_secret">;
  pluginId: string;
  dedupeKey: string;
  payload: PluginDelivery;
  /** Whether the project's answer `status` is a failed delivery (the claim is then released). */
  failed: (status: number) => boolean;
}

export interface DeliveryFailure {
  /** The project worker's status, 0 when it was not reached. */
  status: number;
  reason: string;
}

/**
 * Delivers a claimed event (run it in `ctx.waitUntil`, after the provider
 * was answered). When the delivery fails (not reached, or `failed(status)`),
 * it is logged and the dedupe claim `dedupeKey` released so the provider's
 * retry gets through; the failure is returned for any provider-side notice.
 */
export async function deliverClaimedEvent(env: PluginEnv, claimed: ClaimedEvent): Promise<DeliveryFailure | null> {
  const { project, pluginId, dedupeKey, payload, failed } = claimed;
  let failure: DeliveryFailure | null = null;
  try {
    const response = await deliverToProject(env, project, pluginId, payload);
    if (failed(response.status))
      failure = { status: response.status, reason: `the project answered ${response.status}` };
    await response.body?.cancel();
  } catch (error) {
    failure = { status: 0, reason: String(error) };
  }
  if (!failure) return null;
  console.error(`${pluginId}: delivery of ${dedupeKey} to ${project.slug} failed: ${failure.reason}`);
  await releaseEvent(env.DB, pluginId, dedupeKey).catch(() => {});
  return failure;
}
