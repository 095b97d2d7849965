/**
 * What plugin code (user handlers) may see: no internal database ids.
 * `PluginProject` names the project by slug; `PluginUser` is the provider's
 * user; a resource travels as an opaque `ResourceOwnerRef`.
 */
export interface PluginProject {
  slug: string;
}

export interface PluginUser {
  /** The provider's user id. */
  id: string;
  name?: string;
}

/** Opaque, HMAC-signed string naming one claimed resource (see resourceOwnerRef.ts). */
export type ResourceOwnerRef = string & { readonly __resourceOwnerRef: true };

/** The body a plugin worker POSTs to a project's `/__plugin/<pluginId>`. */
export interface PluginDispatch {
  kind: "command" | "event";
  /** Command name (kind "command") or event name (kind "event"). */
  name?: string;
  event: unknown;
  resource: ResourceOwnerRef;
  project: PluginProject;
  user?: PluginUser;
  replyToken?: string;
}

/** The only view of a project plugin code gets. */
export function toPluginProject(project: { slug: string }): PluginProject {
  return { slug: project.slug };
}
