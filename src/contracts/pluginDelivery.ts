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

/**
 * What a delivery carries: a slash command, an event, or an interaction with
 * something the bot posted or opened: a component clicked or chosen (chat
 * server), a modal submitted (chat server), a block action (workspace), a
 * view submitted (workspace).
 */
export type PluginDeliveryKind = "command" | "event" | "component" | "modal" | "action" | "view";

/** The body a plugin worker POSTs to a project's `/__plugin/<pluginId>`. */
export interface PluginDelivery {
  kind: PluginDeliveryKind;
  /** The command or event name; for an interaction, the id its handler is matched by (customId, action_id, callback_id). */
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
