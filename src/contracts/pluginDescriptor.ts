/**
 * What a plugin is, in one object: everything outside its own folder (the API
 * worker, the upload, the CLI, the console, dev routes, reserved slugs) reads
 * it from the registry (`pluginRegistry.ts`) instead of keeping a list.
 */
export interface PluginDescriptor {
  /**
   * Its name everywhere: `plugin_id` in D1, the project's `/__plugin/<id>`,
   * metadata `plugins.<id>`, `platform plugin … <id>`, and a reserved slug.
   * Its worker is `src/plugins/<id>/`, deployed as `platform-plugin-<id>`.
   */
  readonly id: string;
  /** How a sentence names it: "The chat-server plugin is not available". */
  readonly title: string;
  /** The service binding project workers and the API worker reach its worker through. */
  readonly binding: `${string}_PLUGIN`;
  /** How a project gets it: an OAuth install that claims a resource, or nothing to install. */
  readonly install: PluginInstall | PluginWithoutInstall;
  /** Whether each deploy hands its worker the project's `plugins.<id>` metadata (`POST /deploy`). */
  readonly deploy: boolean;
  /** The events its local fake provider can send (`platform plugin trigger`); absent: it has none. */
  readonly triggers?: PluginTriggers;
  /** Slugs it reserves besides its id (a project there could pass for the plugin). */
  readonly reservedNames?: readonly string[];
  /** The routes its user functions call (`POST`, identity token), as its worker serves them. */
  readonly routes: readonly `/${string}`[];
}

export interface PluginInstall {
  /** The API worker's var holding the plugin worker's public URL: install links are `<url>/install?code=…`. */
  readonly urlVar: `${string}_PLUGIN_URL`;
  /** What an install claims (`plugin_resources.resource_type`), one owner each. */
  readonly resourceType: string;
  /** Whether `platform plugin uninstall` lets the install go (the worker serves `POST /uninstall`). */
  readonly uninstalls: boolean;
}

export interface PluginWithoutInstall {
  /** What to do instead, as `platform plugin install` and `POST /oauth/session` say it. */
  readonly instead: string;
}

export interface PluginTriggers {
  readonly kinds: readonly string[];
  /** The kind that names a command (sent with `name`, `--name` in the CLI). */
  readonly commandKind?: string;
  /**
   * The kinds that act on something the bot posted or opened (a button, a
   * select, a modal, a view) and the parameters each takes besides `text`.
   */
  readonly parameters?: { readonly [kind: string]: readonly TriggerParameterUse[] };
}

export interface TriggerParameterUse {
  readonly name: TriggerParameterName;
  readonly required: boolean;
}

/** A parameter a trigger kind cannot be sent without. */
export const required = (name: TriggerParameterName): TriggerParameterUse => ({ name, required: true });
/** A parameter a trigger kind may be sent with. */
export const optional = (name: TriggerParameterName): TriggerParameterUse => ({ name, required: false });

/**
 * The parameters a test event may take, in one table: the body field is the
 * name, the CLI flag is `flag`; a `list` is comma-separated on the command
 * line (`--values a,b`) and an array in the body; `fields` is `--field k=v`
 * (repeatable) on the command line and an object of strings in the body.
 */
export const TRIGGER_PARAMETERS = {
  customId: { flag: "custom-id", type: "string", maxChars: 100, about: "the component's or modal's customId" },
  values: { flag: "values", type: "list", maxChars: 100, about: "the select's chosen values" },
  fields: { flag: "field", type: "fields", maxChars: 4000, about: "what is typed in each field, by its id" },
  actionId: { flag: "action-id", type: "string", maxChars: 255, about: "the block element's action_id" },
  value: { flag: "value", type: "string", maxChars: 150, about: "the chosen option's value (a select)" },
  callbackId: { flag: "callback-id", type: "string", maxChars: 255, about: "the view's callback_id" },
} as const satisfies Record<
  string,
  { flag: string; type: "string" | "list" | "fields"; maxChars: number; about: string }
>;

export type TriggerParameterName = keyof typeof TRIGGER_PARAMETERS;
