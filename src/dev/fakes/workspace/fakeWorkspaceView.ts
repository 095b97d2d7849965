/** The fake workspace's channels as its user sees them (the console's chat window; src/dev/fakes/chatView.ts). */
import { CHAT_VIEW_MESSAGES, type ChatView, type ChatViewField, type ChatViewRow } from "../chatView.ts";

/** What the window shows of a stored message. */
export interface ViewedMessage {
  channel: string;
  ts: string;
  text: string;
  blocks?: unknown[];
  user: string;
  teamId: string;
  threadTs?: string;
  /** A `chat.postEphemeral` message: only this user sees it. */
  ephemeralTo?: string;
  edited?: boolean;
}

/** A view the app opened (`views.open`), until it is submitted. */
export interface OpenView {
  id: string;
  teamId: string;
  userId: string;
  callbackId: string;
  privateMetadata: string;
  title: Record<string, unknown>;
  submit?: Record<string, unknown>;
  blocks: Record<string, unknown>[];
  hash: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => Boolean(v) && typeof v === "object" && !Array.isArray(v);
const textOf = (v: unknown): string => (isObject(v) && typeof v.text === "string" ? v.text : "");
const options = (e: Json) =>
  (Array.isArray(e.options) ? e.options.filter(isObject) : []).map((o) => ({
    label: textOf(o.text),
    value: String(o.value ?? ""),
  }));

/** What an element shows: a button (gathered into a row with its neighbours) or a select. */
function elementRows(elements: unknown[]): ChatViewRow[] {
  const rows: ChatViewRow[] = [];
  for (const e of elements.filter(isObject)) {
    if (e.type === "button") {
      const button = {
        label: textOf(e.text),
        style: typeof e.style === "string" ? e.style : "secondary",
        id: typeof e.url === "string" ? null : String(e.action_id ?? ""),
        url: typeof e.url === "string" ? e.url : null,
        disabled: false,
      };
      const last = rows.at(-1);
      if (last?.kind === "buttons") last.buttons.push(button);
      else rows.push({ kind: "buttons", buttons: [button] });
    } else if (e.type === "static_select") {
      rows.push({
        kind: "select",
        select: {
          id: String(e.action_id ?? ""),
          placeholder: textOf(e.placeholder) || null,
          options: options(e),
          minValues: 1,
          maxValues: 1,
          disabled: false,
        },
      });
    }
  }
  return rows;
}

function rowsOf(blocks: unknown[]): ChatViewRow[] {
  return blocks.filter(isObject).flatMap((b): ChatViewRow[] => {
    if (b.type === "section")
      return [
        ...(b.text ? [{ kind: "text" as const, text: textOf(b.text) }] : []),
        ...(Array.isArray(b.fields) ? b.fields.map((f) => ({ kind: "text" as const, text: textOf(f) })) : []),
        ...(b.accessory ? elementRows([b.accessory]) : []),
      ];
    if (b.type === "header") return [{ kind: "text", text: textOf(b.text) }];
    if (b.type === "context" && Array.isArray(b.elements))
      return [{ kind: "text", text: b.elements.map(textOf).filter(Boolean).join(" · ") }];
    if (b.type === "actions" && Array.isArray(b.elements)) return elementRows(b.elements);
    return [];
  });
}

function fieldsOf(view: OpenView): ChatViewField[] {
  return view.blocks
    .filter((b) => b.type === "input" && isObject(b.element))
    .map((b) => {
      const e = b.element as Json;
      const select = e.type === "static_select";
      return {
        id: String(e.action_id ?? ""),
        label: textOf(b.label),
        style: select ? "select" : e.multiline === true ? "paragraph" : "short",
        required: b.optional !== true,
        placeholder: textOf(e.placeholder) || null,
        value: typeof e.initial_value === "string" ? e.initial_value : null,
        ...(select ? { options: options(e) } : {}),
      };
    });
}

/** What the fake workspace holds for one team, as its chat view shows it. */
export interface WorkspaceState {
  teamId: string;
  user: { id: string; name: string };
  channels: { id: string; name: string }[];
  messages: ViewedMessage[];
  views: OpenView[];
}

export function workspaceView({ teamId, user, channels, messages, views }: WorkspaceState): ChatView {
  const userId = user.id;
  return {
    resourceId: teamId,
    channels: channels.map(({ id, name }) => ({
      id,
      name,
      messages: messages
        .filter((m) => m.teamId === teamId && m.channel === id && (!m.ephemeralTo || m.ephemeralTo === userId))
        .slice(-CHAT_VIEW_MESSAGES)
        .map((m) => {
          const bot = m.user !== userId;
          return {
            id: m.ts,
            author: bot ? "platform-bot" : user.name,
            bot,
            text: m.threadTs ? `↳ ${m.text}` : m.text,
            ephemeral: Boolean(m.ephemeralTo),
            pending: false,
            edited: m.edited === true,
            command: null,
            rows: rowsOf(m.blocks ?? []),
          };
        }),
    })),
    forms: views
      .filter((v) => v.teamId === teamId && v.userId === userId)
      .map((v) => ({
        id: v.callbackId,
        title: textOf(v.title),
        submitLabel: textOf(v.submit) || "Submit",
        channelId: null,
        fields: fieldsOf(v),
      })),
  };
}
