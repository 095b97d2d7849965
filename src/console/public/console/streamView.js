// @ts-check
// A run's live stream on its page: its steps' `ctx.publish` messages and the lifecycle on topic `run`,
// read batch after batch through the API (as `platform workflow watch` reads them) until the run has ended.
import { clear, el } from "./dom.js";

/**
 * @typedef {{ offset: number, topic: string, data: unknown, at: number, step: string, attempt: number }} StreamMessage
 * @typedef {{ messages: StreamMessage[], ended: boolean, retryAfterMS?: number }} StreamBatch
 */

/** One message as a line: `#<offset> <topic> <data>`. @param {StreamMessage} message */
export function streamLine(message) {
  return `#${message.offset} ${message.topic} ${JSON.stringify(message.data)}`;
}

/**
 * Reads batch after batch from offset 0, handing each batch's messages on, until the stream has ended
 * or the page shows something else. A batch with nothing new waits as long as the platform says
 * (a resting run's actor answers at once), else reads again at once (the read itself waited).
 * @param {{
 *   read: (from: number) => Promise<StreamBatch>,
 *   show: (messages: StreamMessage[]) => void,
 *   current: () => boolean,
 *   sleep: (ms: number) => Promise<void>,
 * }} io
 * @returns {Promise<void>}
 */
export async function followStream({ read, show, current, sleep }) {
  let from = 0;
  while (current()) {
    const batch = await read(from);
    if (!current()) return;
    if (batch.messages.length > 0) {
      show(batch.messages);
      from = /** @type {StreamMessage} */ (batch.messages.at(-1)).offset + 1;
    }
    if (batch.ended) return;
    if (batch.messages.length === 0 && batch.retryAfterMS !== undefined) await sleep(batch.retryAfterMS);
  }
}

/**
 * The run page's stream section: a heading and the messages as they come.
 * @param {HTMLElement} section
 * @returns {(messages: StreamMessage[]) => void} what shows more messages
 */
export function renderStreamSection(section) {
  const list = el("pre", { id: "run-stream-lines", tabindex: "0" });
  const empty = el("p", { class: "meta" }, "Nothing published yet.");
  clear(section).append(el("h3", { id: "stream-heading" }, "Stream"), empty, list);
  return (messages) => {
    empty.remove();
    list.append(...messages.map((message) => `${streamLine(message)}\n`));
  };
}
