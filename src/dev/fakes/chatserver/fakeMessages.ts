/**
 * The fake chat server's messages: how a message body is read (JSON or
 * multipart), what it may hold (the provider's rules, components included:
 * fakeComponentRules.ts), and the store of every message in every channel,
 * with who may see it (an ephemeral answer: only the user who interacted).
 */
import { errorTree, messageComponentsProblem } from "./fakeComponentRules.ts";

export interface MessageAttachment {
  id: string;
  filename: string;
  size: number;
}

export interface MessageFields {
  content: string;
  embeds: unknown[];
  components: unknown[];
  attachments: MessageAttachment[];
}

export interface MessageAuthor {
  id: string;
  username: string;
  global_name?: string;
  bot?: boolean;
}

export interface Message extends MessageFields {
  id: string;
  channel_id: string;
  author: MessageAuthor;
  edited_timestamp: string | null;
  webhook_id?: string;
  /** EPHEMERAL (64), LOADING (128: a deferred answer still "thinking…"). */
  flags: number;
  /** On an interaction's answer: which interaction, and who ran it (Discord's `interaction_metadata`). */
  interaction_metadata?: { id: string; type: number; name?: string; user: MessageAuthor };
}

export const FLAGS = { ephemeral: 1 << 6, loading: 1 << 7 } as const;

/** Discord's JSON error body. */
export function discordError(
  status: number,
  code: number,
  message: string,
  extra: Record<string, unknown> = {},
): Response {
  return Response.json({ message, code, ...extra }, { status });
}

let snowflakeCounter = 0;
/** Discord ids are decimal 64-bit integers: time-based plus a counter. */
export function snowflake(): string {
  return String((BigInt(Date.now() - 1420070400000) << 22n) + BigInt(++snowflakeCounter % 4096));
}

export const invalidForm = (errors: Record<string, unknown>) =>
  discordError(400, 50035, "Invalid Form Body", { errors });

export async function jsonBody(
  request: Request,
): Promise<{ ok: true; value: unknown } | { ok: false; response: Response }> {
  if (!(request.headers.get("content-type") ?? "").startsWith("application/json")) {
    return {
      ok: false,
      response: invalidForm({ _errors: [{ code: "CONTENT_TYPE_INVALID", message: "Expected application/json" }] }),
    };
  }
  try {
    return { ok: true, value: JSON.parse(await request.text()) };
  } catch {
    return { ok: false, response: discordError(400, 50109, "The request body contains invalid JSON.") };
  }
}

/**
 * A message body: JSON, or multipart/form-data with the JSON in `payload_json` and files in `files[n]`
 * (resources/message.mdx "Uploading Files"). What it holds is checked by `messageFields`.
 */
export async function messageBody(
  request: Request,
): Promise<{ ok: true; value: unknown; files: MessageAttachment[] } | { ok: false; response: Response }> {
  if (!(request.headers.get("content-type") ?? "").startsWith("multipart/form-data")) {
    const body = await jsonBody(request);
    return body.ok ? { ...body, files: [] } : body;
  }
  let form: FormData;
  try {
    form = await request.formData();
  } catch {
    return {
      ok: false,
      response: invalidForm({ _errors: [{ code: "INVALID", message: "Malformed multipart body" }] }),
    };
  }
  const files: MessageAttachment[] = [];
  let value: unknown = {};
  for (const [name, part] of form.entries()) {
    if (name === "payload_json") {
      try {
        value = JSON.parse(typeof part === "string" ? part : await part.text());
      } catch {
        return { ok: false, response: discordError(400, 50109, "The request body contains invalid JSON.") };
      }
    } else if (/^files\[\d+\]$/.test(name) && typeof part !== "string") {
      files.push({ id: String(files.length), filename: part.name || name, size: part.size });
    }
  }
  return { ok: true, value, files };
}

/**
 * What a message may carry: content (<= 2000), embeds (<= 10), components, sticker_ids, a poll, files. A
 * new message needs at least one of them (resources/message.mdx "Create Message"); an edit needs none.
 */
export function messageFields(
  body: unknown,
  files: MessageAttachment[],
  creating: boolean,
): Partial<MessageFields> | Response {
  if (!body || typeof body !== "object" || Array.isArray(body))
    return invalidForm({
      _errors: [{ code: "DICT_TYPE_CONVERT", message: "Only dictionaries may be used in a DictType" }],
    });
  const b = body as {
    content?: unknown;
    embeds?: unknown;
    components?: unknown;
    sticker_ids?: unknown;
    poll?: unknown;
  };
  if (b.content !== undefined && b.content !== null && typeof b.content !== "string")
    return invalidForm({ content: { _errors: [{ code: "BASE_TYPE_STRING", message: "Must be a string." }] } });
  const content = typeof b.content === "string" ? b.content : "";
  if (content.length > 2000)
    return invalidForm({
      content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: "Must be 2000 or fewer in length." }] },
    });
  const list = (value: unknown, field: string, max: number): unknown[] | Response => {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.length > max)
      return invalidForm({
        [field]: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH", message: `Must be an array of ${max} or fewer.` }] },
      });
    return value;
  };
  const embeds = list(b.embeds, "embeds", 10);
  if (embeds instanceof Response) return embeds;
  if (embeds.some((e) => !e || typeof e !== "object"))
    return invalidForm({
      embeds: { _errors: [{ code: "DICT_TYPE_CONVERT", message: "Only dictionaries may be used in a DictType" }] },
    });
  const components = list(b.components, "components", 40);
  if (components instanceof Response) return components;
  const componentProblem = messageComponentsProblem(components);
  if (componentProblem) return invalidForm(errorTree(componentProblem));
  const stickers = list(b.sticker_ids, "sticker_ids", 3);
  if (stickers instanceof Response) return stickers;
  const poll = b.poll && typeof b.poll === "object" ? b.poll : null;
  if (creating && !content && !embeds.length && !components.length && !stickers.length && !poll && !files.length)
    return discordError(400, 50006, "Cannot send an empty message");
  // An edit changes only what it names.
  const fields: Partial<MessageFields> = {};
  if (creating || b.content !== undefined) fields.content = content;
  if (creating || b.embeds !== undefined) fields.embeds = embeds;
  if (creating || b.components !== undefined) fields.components = components;
  if (creating || files.length) fields.attachments = files;
  return fields;
}

/** Every message the fake holds, by id. */
export function createMessageStore(botAuthor: MessageAuthor, now: () => number) {
  let messages = new Map<string, Message>();
  return {
    get: (id: string) => messages.get(id),
    all: () => [...messages.values()],
    inChannel: (channelId: string) => [...messages.values()].filter((m) => m.channel_id === channelId),
    create(
      channelId: string,
      fields: Partial<MessageFields>,
      options: {
        author?: MessageAuthor;
        webhookId?: string;
        flags?: number;
        interaction?: Message["interaction_metadata"];
      } = {},
    ): Message {
      const message: Message = {
        id: snowflake(),
        channel_id: channelId,
        content: "",
        embeds: [],
        components: [],
        attachments: [],
        ...fields,
        author: options.author ?? botAuthor,
        edited_timestamp: null,
        flags: options.flags ?? 0,
        ...(options.webhookId ? { webhook_id: options.webhookId } : {}),
        ...(options.interaction ? { interaction_metadata: options.interaction } : {}),
      };
      messages.set(message.id, message);
      return message;
    },
    /** Only the fields the edit names change; a "thinking…" answer stops loading. */
    edit(message: Message, fields: Partial<MessageFields>): Message {
      Object.assign(message, fields, {
        edited_timestamp: new Date(now()).toISOString(),
        flags: message.flags & ~FLAGS.loading,
      });
      return message;
    },
    delete(message: Message): void {
      messages.delete(message.id);
    },
    reset(): void {
      messages = new Map();
    },
  };
}

export type MessageStore = ReturnType<typeof createMessageStore>;
