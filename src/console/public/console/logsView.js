// @ts-check
// The Logs section of a project: its requests, console output, uncaught errors and workflow
// steps, the words of logLines.js (as `platform logs` prints them), newest at the bottom; it
// follows the log while the project's page is open.
import { clear, el } from "./dom.js";
import { createStepFollower, logEntryLines } from "./logLines.js";
import { printableLine } from "./printableLine.js";

/** How many recent lines the section starts with. */
const HISTORY = 100;
/** The most lines it keeps on the page (older ones scroll out). */
const SHOWN = 500;
/** How long one read of the log waits for something new. */
const WAIT_MS = 10_000;
const STEP_POLL_MS = 1000;

/**
 * The text the view appends for lines of the log: each with its time, its control characters
 * escaped (a logged escape sequence shows as `\x1b…`, as `platform logs` prints it).
 * @param {readonly { at: number, text: string }[]} added
 */
export function viewLines(added) {
  return added.map(({ at, text }) => `${new Date(at).toLocaleTimeString()} ${printableLine(text)}\n`);
}

/**
 * @param {string} slug
 * @param {{
 *   api: (method: string, path: string) => Promise<any>,
 *   errorText: (error: unknown) => string,
 *   isCurrent: () => boolean,
 * }} io  `isCurrent` is false once the reader has left the page: following stops.
 */
export function logsSection(slug, { api, errorText, isCurrent }) {
  const lines = el("pre", {
    id: "log-lines",
    class: "log-lines",
    tabindex: "0",
    role: "log",
    "aria-label": "Log lines",
  });
  const status = el("p", { role: "status", class: "meta" }, "Loading…");
  const section = el(
    "section",
    { id: "logs", "aria-labelledby": "logs-heading" },
    el("h3", { id: "logs-heading" }, "Logs"),
    el(
      "p",
      { class: "meta" },
      "Requests, console output, uncaught errors and workflow steps; stacks name the project's sources. The same as ",
      el("code", {}, "platform logs --follow"),
      ".",
    ),
    status,
    lines,
  );
  const base = `/projects/${encodeURIComponent(slug)}/logs`;

  /** @param {{ at: number, text: string }[]} added */
  const show = (added) => {
    if (added.length === 0) return;
    const atBottom = lines.scrollTop + lines.clientHeight >= lines.scrollHeight - 4;
    for (const line of viewLines(added)) lines.append(line);
    while (lines.childNodes.length > SHOWN) lines.firstChild?.remove();
    if (atBottom) lines.scrollTop = lines.scrollHeight;
  };

  void (async () => {
    let page;
    try {
      page = await api("GET", `${base}?limit=${HISTORY}`);
    } catch (error) {
      if (isCurrent()) status.textContent = `Could not load the log: ${errorText(error)}`;
      return;
    }
    /** @type {{ at: number, text: string }[] | null} the first lines, gathered to be sorted by time */
    let history = logEntryLines(page.entries);
    const steps = createStepFollower({
      slug,
      since: page.entries[0]?.at ?? Date.now() - 3_600_000,
      get: async (path) => api("GET", path).catch(() => null),
      print: (text, at) => (history ? history.push({ at, text }) : show([{ at, text }])),
    });
    await steps.tick();
    if (!isCurrent()) return;
    clear(lines);
    show(history.sort((a, b) => a.at - b.at));
    history = null;
    status.textContent = lines.childNodes.length ? "Live." : "Nothing logged yet. Live.";
    const stepTimer = setInterval(() => {
      if (isCurrent()) void steps.tick();
      else clearInterval(stepTimer);
    }, STEP_POLL_MS);
    let cursor = page.cursor;
    while (isCurrent()) {
      try {
        const next = await api("GET", `${base}?after=${cursor}&waitMS=${WAIT_MS}`);
        if (!isCurrent()) break;
        show(logEntryLines(next.entries));
        cursor = next.cursor;
        status.textContent = "Live.";
      } catch (error) {
        if (!isCurrent()) break;
        status.textContent = `The log stopped answering (${errorText(error)}); trying again…`;
        await new Promise((resolve) => setTimeout(resolve, 3000));
      }
    }
    clearInterval(stepTimer);
  })();
  return section;
}
