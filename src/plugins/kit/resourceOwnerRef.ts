import { isResourceType } from "../../contracts/pluginRegistry.ts";
import { PlatformError } from "../../core/errors.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import type { PluginEnv } from "./pluginEnv.ts";
import type { ResourceOwnerRef } from "../../contracts/pluginDelivery.ts";
import { findResourceOwner, type ResourceRow, type ResourceType } from "../../workers/db/resourceClaims.ts";
import { purposeHmacKey } from "./secretKeys.ts";
import { signPayload, verifyPayload } from "../../core/crypto/signed.ts";

/**
 * An opaque, HMAC-signed (key derived from `STATE_SECRET`) name for one
 * claimed resource, handed to user code in deliveries and given back in
 * proxy calls (e.g. "reply in this server"). It carries the plugin, the
 * resource type and the provider's id, never an internal id; resolving it
 * checks the signature and that the calling project still owns the resource.
 */
interface RefClaims {
  v: 1;
  p: string;
  t: ResourceType;
  r: string;
}

const key = (secret: string | undefined) => purposeHmacKey(secret, "STATE_SECRET", "resource-owner-ref-v1");

export async function makeResourceOwnerRef(
  env: Pick<PluginEnv, "STATE_SECRET">,
  resource: { pluginId: string; resourceType: ResourceType; externalResourceId: string },
): Promise<ResourceOwnerRef> {
  const claims: RefClaims = { v: 1, p: resource.pluginId, t: resource.resourceType, r: resource.externalResourceId };
  return (await signPayload(await key(env.STATE_SECRET), claims)) as ResourceOwnerRef;
}

/**
 * The resource a ref names, for the calling project. A forged ref, one of
 * another plugin, or a resource the project no longer owns throws
 * `invalid_input` / `forbidden` (the same answer whether or not another
 * project owns it).
 */
export async function resolveResourceOwnerRef(
  env: Pick<PluginEnv, "STATE_SECRET" | "DB">,
  ref: unknown,
  pluginId: string,
  project: Pick<ProjectRow, "id">,
): Promise<ResourceRow> {
  const check = await verifyPayload(await key(env.STATE_SECRET), ref);
  const claims = check.ok ? (check.payload as RefClaims | null) : null;
  if (claims?.v !== 1 || claims.p !== pluginId || typeof claims.r !== "string" || !isResourceType(claims.t)) {
    throw new PlatformError("invalid_input", "resource is not a resource reference this plugin issued.");
  }
  const owner = await findResourceOwner(env.DB, pluginId, claims.t, claims.r);
  if (!owner || owner.project.id !== project.id) {
    throw new PlatformError(
      "forbidden",
      "This project is not connected to that resource (any more). Reinstall the plugin.",
    );
  }
  return owner.resource;
}
