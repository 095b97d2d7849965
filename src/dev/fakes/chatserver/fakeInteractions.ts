/**
 * The fake chat server's interactions, as Discord runs them: a slash command
 * (type 2), a click on a button or a choice in a select of a message (3), a
 * modal submitted (5), each signed with the application's Ed25519 key and
 * POSTed to the plugin's webhook; then answered once, within 3 seconds,
 * inline or through the callback endpoint, with a callback type the
 * interaction allows; then edited and followed up through the interaction
 * webhook for 15 minutes.
 *
 * What the fake refuses, as Discord does: a click on a component no message
 * shows (or a disabled one), select values outside its options or count, a
 * submit of a modal that is not open or without its required fields; a
 * second first answer (40060); a callback type the interaction does not take
 * (9 for a modal submit, 6/7 for a command); a modal or components that break
 * the provider's rules (50035); a webhook answer 202 with no callback before
 * it, or any first answer after 3 seconds ("This interaction failed", kept in
 * `failed`; a callback that late is 404 10062 Unknown interaction). Its
 * payloads carry the fields Discord sends (`entitlements`, `context`,
 * `authorizing_integration_owners`, a member's `joined_at`, …).
 */
import { signEd25519 } from "../../../core/crypto/ed25519.ts";
import { randomHex } from "../../../core/crypto/encoding.ts";
import { guildMember } from "./fakeGuildMember.ts";
import { errorTree, modalInputs, modalProblem } from "./fakeComponentRules.ts";
import {
  discordError,
  FLAGS,
  invalidForm,
  messageBody,
  messageFields,
  snowflake,
  type Message,
  type MessageAttachment,
  type MessageAuthor,
  type MessageStore,
} from "./fakeMessages.ts";
import {
  componentData,
  type InteractionTrigger,
  messageShowing,
  modalSubmit,
  type OpenModal,
  triggerError,
} from "./fakeInteractionTriggers.ts";

export const INTERACTION_TOKEN_TTL_MS = 15 * 60 * 1000;
/** The first answer must come within this. */
export const FIRST_ANSWER_MS = 3_000;

export interface Interaction {
  id: string;
  token: string;
  /** 2 command, 3 component, 5 modal submit. */
  type: 2 | 3 | 5;
  /** The command's name or the component's / modal's custom_id. */
  name: string;
  guildId: string;
  channelId: string;
  /** The message a component sits on (3), or whose component opened the modal (5). */
  sourceMessageId: string | null;
  createdAt: number;
  acknowledged: boolean;
  /** The callback type of the first answer. */
  answeredWith: number | null;
  /** Why the user saw "This interaction failed", if they did. */
  failed: string | null;
  responses: unknown[];
}

export interface FakeInteractionsConfig {
  applicationId: string;
  signingSeed: string;
  webhookUrl: string;
  deliver: (request: Request) => Promise<Response>;
  now: () => number;
  messages: MessageStore;
  /** Who runs commands and clicks. */
  user: MessageAuthor;
}

const MESSAGE_FLAGS = new Set([
  0,
  4,
  FLAGS.ephemeral,
  4096,
  4 | FLAGS.ephemeral,
  FLAGS.ephemeral | 4096,
  4 | 4096,
  4 | 64 | 4096,
]);

/** The upload limit a guild without boosts gives (bytes), as an interaction reports it. */
const ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024;

type Answer = { ok: true; message: Message | null } | { ok: false; response: Response };

const refused = (response: Response): Answer => ({ ok: false, response });

export function createFakeInteractions(config: FakeInteractionsConfig) {
  const { messages, now } = config;
  let interactions = new Map<string, Interaction>();
  /** Interaction id → its @original message id. */
  let originals = new Map<string, string>();
  /** Followup message id → its interaction id. */
  let followups = new Map<string, string>();
  let modals: OpenModal[] = [];

  function live(token: string): Interaction | null {
    const interaction = [...interactions.values()].find((i) => i.token === token);
    if (!interaction || now() - interaction.createdAt > INTERACTION_TOKEN_TTL_MS) return null;
    return interaction;
  }

  const invocation = (interaction: Interaction): Message["interaction_metadata"] => ({
    id: interaction.id,
    type: interaction.type,
    ...(interaction.type === 2 ? { name: interaction.name } : {}),
    user: config.user,
  });

  function flagsOf(data: unknown, allowed: Set<number>): number | Response {
    const flags = (data as { flags?: unknown } | null)?.flags ?? 0;
    if (typeof flags !== "number" || !allowed.has(flags))
      return invalidForm({ flags: { _errors: [{ code: "MESSAGE_FLAGS_INVALID", message: "Invalid message flags" }] } });
    return flags;
  }

  /** The callback types each interaction takes (receiving-and-responding.mdx). */
  function allowedTypes(interaction: Interaction): number[] {
    if (interaction.type === 2) return [4, 5, 9];
    if (interaction.type === 3) return [4, 5, 6, 7, 9];
    return interaction.sourceMessageId ? [4, 5, 6, 7] : [4, 5];
  }

  /** The first answer, inline or by callback: checked, then applied (a message made or edited, a modal opened). */
  function respond(interaction: Interaction, value: unknown, files: MessageAttachment[]): Answer {
    const type = (value as { type?: unknown } | null)?.type;
    const data = (value as { data?: unknown } | null)?.data;
    if (![1, 4, 5, 6, 7, 8, 9, 10, 12].includes(type as number))
      return refused(
        invalidForm({
          type: {
            _errors: [{ code: "BASE_TYPE_CHOICES", message: "Value must be one of (1, 4, 5, 6, 7, 8, 9, 10, 12)." }],
          },
        }),
      );
    if (interaction.acknowledged)
      return refused(discordError(400, 40060, "Interaction has already been acknowledged."));
    if (!allowedTypes(interaction).includes(type as number))
      return refused(
        invalidForm({
          type: {
            _errors: [
              {
                code: "INTERACTION_RESPONSE_TYPE_INVALID",
                message: "This interaction cannot be answered with that type.",
              },
            ],
          },
        }),
      );
    const source = interaction.sourceMessageId ? messages.get(interaction.sourceMessageId) : undefined;
    let message: Message | null = null;
    if (type === 4) {
      const fields = messageFields(data, files, true);
      if (fields instanceof Response) return refused(fields);
      const flags = flagsOf(data, MESSAGE_FLAGS);
      if (flags instanceof Response) return refused(flags);
      message = messages.create(interaction.channelId, fields, {
        flags,
        webhookId: config.applicationId,
        interaction: invocation(interaction),
      });
      originals.set(interaction.id, message.id);
    } else if (type === 5) {
      const flags = flagsOf(data ?? {}, new Set([0, FLAGS.ephemeral]));
      if (flags instanceof Response) return refused(flags);
      // "<bot> is thinking…", replaced by the first edit of @original.
      message = messages.create(
        interaction.channelId,
        {},
        { flags: flags | FLAGS.loading, webhookId: config.applicationId, interaction: invocation(interaction) },
      );
      originals.set(interaction.id, message.id);
    } else if (type === 6 || type === 7) {
      if (!source) return refused(discordError(404, 10008, "Unknown Message"));
      if (type === 7) {
        const fields = messageFields(data, files, false);
        if (fields instanceof Response) return refused(fields);
        messages.edit(source, fields);
      }
      message = source;
      originals.set(interaction.id, source.id);
    } else if (type === 9) {
      const problem = modalProblem(data);
      if (problem) return refused(invalidForm(errorTree(problem)));
      const modal = data as { custom_id: string; title: string; components: unknown[] };
      modals.push({
        openedBy: interaction.id,
        guildId: interaction.guildId,
        channelId: interaction.channelId,
        sourceMessageId: interaction.type === 3 ? interaction.sourceMessageId : null,
        customId: modal.custom_id,
        title: modal.title,
        inputs: modalInputs(modal.components),
      });
    }
    interaction.acknowledged = true;
    interaction.answeredWith = type as number;
    interaction.responses.push(value);
    if (now() - interaction.createdAt > FIRST_ANSWER_MS)
      interaction.failed = `The first answer came after ${FIRST_ANSWER_MS / 1000} s: the token was invalidated.`;
    return { ok: true, message };
  }

  /** `POST /interactions/{id}/{token}/callback[?with_response=true]` (no auth: the token is in the path). */
  async function callback(request: Request, id: string, token: string, withResponse: boolean): Promise<Response> {
    const interaction = interactions.get(id);
    if (!interaction || interaction.token !== token || now() - interaction.createdAt > INTERACTION_TOKEN_TTL_MS)
      return discordError(404, 10062, "Unknown interaction");
    // Unanswered after 3 s, the interaction is gone for the callback endpoint; the user saw "This interaction failed".
    if (!interaction.acknowledged && now() - interaction.createdAt > FIRST_ANSWER_MS) {
      interaction.failed = `No first answer within ${FIRST_ANSWER_MS / 1000} s: the callback was refused (10062).`;
      return discordError(404, 10062, "Unknown interaction");
    }
    const body = await messageBody(request);
    if (!body.ok) return body.response;
    const answered = respond(interaction, body.value, body.files);
    if (!answered.ok) return answered.response;
    if (!withResponse) return new Response(null, { status: 204 });
    const message = answered.message;
    return Response.json({
      interaction: {
        id: interaction.id,
        type: interaction.type,
        response_message_id: message?.id ?? null,
        response_message_loading: Boolean(message && message.flags & FLAGS.loading),
        response_message_ephemeral: Boolean(message && message.flags & FLAGS.ephemeral),
      },
      resource: { type: interaction.answeredWith, ...(message && interaction.answeredWith !== 6 ? { message } : {}) },
    });
  }

  /** `/webhooks/{app}/{token}[/messages/{@original | id}]`: followups, and the answers to edit or delete. */
  async function webhook(request: Request, seg: string[]): Promise<Response> {
    const method = request.method;
    if (seg[1] !== config.applicationId) return discordError(404, 10015, "Unknown Webhook");
    const interaction = live(seg[2]!);
    if (!interaction) return discordError(401, 50027, "Invalid Webhook Token");
    if (seg.length === 3) {
      if (method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
      if (!interaction.acknowledged) return discordError(404, 10062, "Unknown interaction");
      const body = await messageBody(request);
      if (!body.ok) return body.response;
      const fields = messageFields(body.value, body.files, true);
      if (fields instanceof Response) return fields;
      const flags = flagsOf(body.value, MESSAGE_FLAGS);
      if (flags instanceof Response) return flags;
      const message = messages.create(interaction.channelId, fields, {
        flags,
        webhookId: config.applicationId,
        interaction: invocation(interaction),
      });
      followups.set(message.id, interaction.id);
      interaction.responses.push({ followup: body.value });
      return Response.json(message);
    }
    if (seg.length !== 5 || seg[3] !== "messages") return discordError(404, 0, "404: Not Found");
    const original = seg[4] === "@original";
    const id = original ? originals.get(interaction.id) : seg[4]!;
    const existing = id ? messages.get(id) : undefined;
    const ours = existing && (original || followups.get(existing.id) === interaction.id) ? existing : undefined;
    if (!ours) return discordError(404, 10008, "Unknown Message");
    if (method === "GET") return Response.json(ours);
    if (method === "DELETE") {
      messages.delete(ours);
      if (original) originals.delete(interaction.id);
      return new Response(null, { status: 204 });
    }
    if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
    const body = await messageBody(request);
    if (!body.ok) return body.response;
    const fields = messageFields(body.value, body.files, false);
    if (fields instanceof Response) return fields;
    interaction.responses.push({ edit: body.value });
    return Response.json(messages.edit(ours, fields));
  }

  function newInteraction(
    type: Interaction["type"],
    name: string,
    guildId: string,
    channelId: string,
    sourceMessageId: string | null,
  ): Interaction {
    const interaction: Interaction = {
      id: snowflake(),
      token: `aW50ZXJhY3Rpb24${randomHex(24)}`,
      type,
      name,
      guildId,
      channelId,
      sourceMessageId,
      createdAt: now(),
      acknowledged: false,
      answeredWith: null,
      failed: null,
      responses: [],
    };
    interactions.set(interaction.id, interaction);
    return interaction;
  }

  /** Builds, signs and delivers an interaction; answers what the plugin said and what came of it. */
  async function send(t: InteractionTrigger): Promise<Response> {
    let interaction: Interaction;
    let data: Record<string, unknown>;
    let source: Message | undefined;
    let modal: OpenModal | undefined;
    if (t.kind === "command") {
      if (!t.name) return triggerError(400, "a command needs a name");
      interaction = newInteraction(2, t.name, t.guildId, t.channelId ?? t.guildChannels[0] ?? "0", null);
      data = {
        id: snowflake(),
        name: t.name,
        type: 1,
        ...(t.text ? { options: [{ name: "text", type: 3, value: t.text }] } : {}),
      };
    } else if (t.kind === "component") {
      if (!t.customId) return triggerError(400, "a component click needs a customId");
      const found = messageShowing(messages, t);
      if (found instanceof Response) return found;
      const built = componentData(t, found);
      if (built instanceof Response) return built;
      source = found;
      data = built;
      interaction = newInteraction(3, t.customId, t.guildId, found.channel_id, found.id);
    } else {
      if (!t.customId) return triggerError(400, "a modal submit needs a customId");
      const submit = modalSubmit(modals, t);
      if (submit instanceof Response) return submit;
      modal = submit.modal;
      data = submit.data;
      source = modal.sourceMessageId ? messages.get(modal.sourceMessageId) : undefined;
      interaction = newInteraction(5, t.customId, t.guildId, modal.channelId, source?.id ?? null);
    }
    const payload = {
      id: interaction.id,
      application_id: config.applicationId,
      type: interaction.type,
      data,
      guild_id: t.guildId,
      channel_id: interaction.channelId,
      channel: { id: interaction.channelId, type: 0, guild_id: t.guildId },
      member: guildMember(config.user, { permissions: "0" }),
      ...(source ? { message: source } : {}),
      token: interaction.token,
      version: 1,
      app_permissions: "0",
      locale: "en-US",
      guild_locale: "en-US",
      entitlements: [],
      // Installed to a guild (0); run in a guild (context 0).
      authorizing_integration_owners: { "0": t.guildId },
      context: 0,
      attachment_size_limit: ATTACHMENT_SIZE_LIMIT,
    };
    const body = JSON.stringify(payload);
    const timestamp = t.timestamp ?? String(Math.floor(now() / 1000));
    const signature = await signEd25519(config.signingSeed, timestamp + body);
    const answers: { status: number; body: unknown }[] = [];
    for (let i = 0; i < t.deliveries; i++) {
      const response = await config.deliver(
        new Request(config.webhookUrl, {
          method: "POST",
          body,
          headers: {
            "content-type": "application/json",
            "user-agent": "Discord-Interactions/1.0 (+https://discord.com)",
            "X-Signature-Ed25519": signature,
            "X-Signature-Timestamp": timestamp,
          },
        }),
      );
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {
        // keep the text
      }
      answers.push({ status: response.status, body: parsed });
      if (i === 0) await takeWebhookAnswer(interaction, response.status, parsed);
    }
    if (modal && !interaction.failed) modals = modals.filter((m) => m !== modal);
    return Response.json({
      payload,
      delivered: answers.length,
      status: answers[0]!.status,
      body: answers[0]!.body,
      answers,
      interaction: {
        acknowledged: interaction.acknowledged,
        answeredWith: interaction.answeredWith,
        failed: interaction.failed,
      },
    });
  }

  /** The webhook's own answer: an inline first answer, or 202 after a callback; anything else fails the interaction. */
  async function takeWebhookAnswer(interaction: Interaction, status: number, parsed: unknown): Promise<void> {
    if (status === 202 && parsed === null) {
      if (!interaction.acknowledged)
        interaction.failed = "The webhook answered 202 without answering through the callback endpoint first.";
      return;
    }
    if (status !== 200 || typeof (parsed as { type?: unknown } | null)?.type !== "number") {
      if (!interaction.acknowledged)
        interaction.failed = `The webhook answered ${status} without an interaction response.`;
      return;
    }
    const answered = respond(interaction, parsed, []);
    if (!answered.ok) interaction.failed = `The webhook's inline answer was refused: ${await answered.response.text()}`;
  }

  return {
    send,
    callback,
    webhook,
    /** Modals open in a guild, oldest first. */
    openModals: (guildId: string) => modals.filter((m) => m.guildId === guildId),
    state: () => ({ interactions, modals }),
    reset() {
      interactions = new Map();
      originals = new Map();
      followups = new Map();
      modals = [];
    },
  };
}

export type FakeInteractions = ReturnType<typeof createFakeInteractions>;
