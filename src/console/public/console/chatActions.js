// @ts-check
// What a person's action in the chat window sends: each click, choice,
// submit or typed line becomes the body of a test event (POST
// /projects/:slug/plugins/:plugin/test-events), which has the local fake
// provider send the real signed interaction through the plugin. Pure: no DOM.

/**
 * The chat as `GET /projects/:slug/plugins/:plugin/chat` answers it (src/dev/fakes/chatView.ts).
 * @typedef {{ label: string, style: string, id: string | null, url: string | null, disabled: boolean }} ChatButton
 * @typedef {{ id: string, placeholder: string | null, options: { label: string, value: string }[],
 *   minValues: number, maxValues: number, disabled: boolean }} ChatSelect
 * @typedef {{ kind: "text", text: string } | { kind: "buttons", buttons: ChatButton[] } | { kind: "select", select: ChatSelect }} ChatRow
 * @typedef {{ id: string, author: string, bot: boolean, text: string, ephemeral: boolean, pending: boolean,
 *   edited: boolean, command: string | null, rows: ChatRow[] }} ChatMessage
 * @typedef {{ id: string, label: string, style: "short" | "paragraph" | "select", required: boolean,
 *   placeholder: string | null, value: string | null, options?: { label: string, value: string }[] }} ChatField
 * @typedef {{ id: string, title: string, submitLabel: string, channelId: string | null, fields: ChatField[] }} ChatForm
 * @typedef {{ id: string, name: string, messages: ChatMessage[] }} ChatChannel
 * @typedef {{ plugin: string, resource: { externalId: string, displayName: string | null },
 *   channels: ChatChannel[], forms: ChatForm[] }} ChatWindowView
 */

/** How each plugin names a click, a choice and a submit: the chat server's components, the workspace's block actions. */
const KINDS = /** @type {const} */ ({
  chatserver: { click: "component", submit: "modal", idField: "customId", submitIdField: "customId" },
  workspace: { click: "action", submit: "view", idField: "actionId", submitIdField: "callbackId" },
});

/** @param {string} plugin */
function kindsOf(plugin) {
  const kinds = KINDS[/** @type {keyof typeof KINDS} */ (plugin)];
  if (!kinds) throw new Error(`The chat window does not know the ${plugin} plugin.`);
  return kinds;
}

/**
 * A click on a button of a message in a channel.
 * @param {string} plugin @param {string} channel @param {string} message @param {string} id
 */
export function clickBody(plugin, channel, message, id) {
  const kinds = kindsOf(plugin);
  return { kind: kinds.click, [kinds.idField]: id, channel, message };
}

/**
 * A choice in a select: the chat server takes every chosen value, the workspace's static select one.
 * @param {string} plugin @param {string} channel @param {string} message @param {string} id @param {string[]} values
 */
export function chooseBody(plugin, channel, message, id, values) {
  const kinds = kindsOf(plugin);
  const chosen = plugin === "workspace" ? { value: values[0] ?? "" } : { values };
  return { kind: kinds.click, [kinds.idField]: id, channel, message, ...chosen };
}

/**
 * A submit of an open modal or view, with what each field holds.
 * @param {string} plugin @param {string} id @param {Record<string, string>} fields
 */
export function submitBody(plugin, id, fields) {
  const kinds = kindsOf(plugin);
  return { kind: kinds.submit, [kinds.submitIdField]: id, fields };
}

const COMMAND = /^\/([-_\p{Ll}\p{Lo}\p{N}]{1,32})(?:\s+([\s\S]*))?$/u;

/**
 * A typed line: `/name text` runs a slash command on the chat server; anything else is a message.
 * @param {string} plugin @param {string} channel @param {string} line
 * @returns {{ body: Record<string, string> } | { error: string }}
 */
export function typedBody(plugin, channel, line) {
  const text = line.trim();
  if (!text) return { error: "Type a message, or /command." };
  if (text.startsWith("/")) {
    if (plugin !== "chatserver") return { error: "Slash commands are the chat server's: type a message here." };
    const match = COMMAND.exec(text);
    if (!match)
      return { error: "A command is / and 1–32 lowercase letters, digits, - or _, then its text: /deploy production." };
    const rest = (match[2] ?? "").trim();
    return {
      body: { kind: "command", name: /** @type {string} */ (match[1]), channel, ...(rest ? { text: rest } : {}) },
    };
  }
  return { body: { kind: "message", text, channel } };
}

/**
 * Whether two answers of the chat route show the same thing (the window is redrawn only when not, so a
 * choice in progress or a half-typed form is never lost to a refresh).
 * @param {ChatWindowView | null} a @param {ChatWindowView | null} b
 */
export function sameChat(a, b) {
  return JSON.stringify(a) === JSON.stringify(b);
}
