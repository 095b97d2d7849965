// @ts-check
// Draws a run's timeline (timeline.js's model) into the run page: one row per
// step attempt, one per sleep, wait for an event or other pause between steps
// (their own kind of bar, with the wake time or the event's name), and marks
// for received events and the cancel on a row of their own.
import { el, clear, formatTime } from "./dom.js";
import { buildTimeline, formatDuration, PAUSE_KINDS, placeOnAxis } from "./timeline.js";

/**
 * @typedef {import("./timeline.js").AttemptRow} AttemptRow
 * @typedef {import("./timeline.js").PauseRow} PauseRow
 * @typedef {import("./timeline.js").Mark} Mark
 */

/** @param {{ start: number, end: number }} span @param {{ start: number, end: number }} axis @param {string} className */
function barOn(span, axis, className) {
  const bar = el("span", { class: className });
  const place = placeOnAxis(span, axis);
  bar.style.left = `${place.left}%`;
  bar.style.width = `${place.width}%`;
  return bar;
}

/** @param {AttemptRow} row @param {{ start: number, end: number }} axis */
function attemptItem(row, axis) {
  const kind = row.rollback ? " rollback" : "";
  const track = el(
    "div",
    { class: "track", "aria-hidden": "true" },
    barOn(row, axis, `bar outcome-${row.outcome}${kind}`),
  );
  const took = formatDuration(row.end - row.start);
  let detail =
    row.outcome === "completed"
      ? row.rollback
        ? `rolled back in ${took}`
        : `completed in ${took}${row.nextStep ? ` → ${row.nextStep}` : ""}`
      : row.outcome === "failed"
        ? `failed after ${took}: ${row.reason}${row.reason === "interrupted" ? " (its executor was gone)" : ""}`
        : `running for ${took}`;
  if (row.retryWait) {
    track.append(barOn(row.retryWait, axis, "wait"));
    detail += row.retryWait.pending
      ? ` · waiting to retry (${formatDuration(row.retryWait.end - row.retryWait.start)} so far)`
      : ` · retried after ${formatDuration(row.retryWait.end - row.retryWait.start)}`;
  } else if (row.outcome === "failed") detail += " · not retried";
  return el(
    "li",
    {
      class: `attempt outcome-${row.outcome}${kind}`,
      "data-step": row.step,
      "data-attempt": String(row.attempt),
      "data-outcome": row.outcome,
      ...(row.rollback ? { "data-rollback": "true" } : {}),
    },
    el("span", { class: "label" }, `${row.rollback ? "undo " : ""}${row.step} · attempt ${row.attempt}`),
    track,
    el("span", { class: "detail" }, detail),
  );
}

/** What a sleep, a wait or another pause says about itself. @param {PauseRow} row */
function pauseDetail(row) {
  const lasted = formatDuration(row.end - row.start);
  if (row.pause !== "sleep" && row.pause !== "wait") {
    // A continuation kind this console does not know by name: what every pause has.
    const until = row.until === undefined ? "" : ` until ${formatTime(row.until)}`;
    return row.pending
      ? `${row.pause}${until} (${lasted} so far)`
      : `${row.pause} for ${lasted}${until ? ` (${until.trim()})` : ""}`;
  }
  if (row.pause === "sleep") {
    const until = `until ${formatTime(row.until ?? row.end)}`;
    if (row.pending) return `sleeping ${until} (${lasted} so far)`;
    return row.outcome === "ended" ? `slept ${lasted} of a sleep ${until}` : `slept ${lasted} (${until})`;
  }
  const timeout = row.until === undefined ? "no timeout" : `timeout ${formatTime(row.until)}`;
  if (row.pending) return `waiting for "${row.event}" (${timeout}; ${lasted} so far)`;
  if (row.outcome === "received") return `got "${row.event}" after ${lasted}`;
  if (row.outcome === "timed_out") return `no "${row.event}" before the timeout: continued after ${lasted}`;
  return `waited ${lasted} for "${row.event}"`;
}

/** @param {PauseRow} row @param {{ start: number, end: number }} axis */
function pauseItem(row, axis) {
  return el(
    "li",
    { class: `pause pause-${row.pause}`, "data-pause": row.pause, "data-pending": String(row.pending) },
    el(
      "span",
      { class: "label" },
      row.pause === "wait"
        ? `wait for ${row.event}`
        : (PAUSE_KINDS.find((kind) => kind.pause === row.pause)?.label ?? row.pause),
    ),
    el("div", { class: "track", "aria-hidden": "true" }, barOn(row, axis, `bar pause-${row.pause}`)),
    el("span", { class: "detail" }, pauseDetail(row)),
  );
}

/** Received events and the cancel, as ticks on one track and in words. @param {Mark[]} marks @param {{ start: number, end: number }} axis */
function marksItem(marks, axis) {
  const track = el("div", { class: "track", "aria-hidden": "true" });
  const words = [];
  for (const mark of marks) {
    // A tick of fixed width (CSS) where the mark happened.
    const tick = el("span", { class: `mark mark-${mark.mark}` });
    tick.style.left = `${placeOnAxis({ start: mark.at, end: mark.at }, axis).left}%`;
    track.append(tick);
    const at = `+${formatDuration(mark.at - axis.start)}`;
    words.push(
      mark.mark === "event"
        ? `${at} event "${mark.name}" received ${JSON.stringify(mark.payload)}`
        : `${at} cancelled: ${mark.reason}`,
    );
  }
  return el(
    "li",
    { class: "marks" },
    el("span", { class: "label" }, "events"),
    track,
    el("span", { class: "detail" }, words.join(" · ")),
  );
}

/**
 * @param {HTMLElement} section @param {any} view
 * @param {(step: string) => void} [rerunFrom]  for a finished run: "Rerun from here" on each step
 */
export function renderTimeline(section, view, rerunFrom) {
  const model = buildTimeline(view, Date.now());
  const axis = { start: model.start, end: model.end };
  const total = model.end - model.start;
  const list = el("ol", { class: "timeline", id: "timeline" });
  /** Steps that already have their "Rerun from here" (the first attempt of each step gets it). */
  const offered = new Set();
  for (const row of model.rows) {
    if ("pause" in row) {
      list.append(pauseItem(row, axis));
      continue;
    }
    const item = attemptItem(row, axis);
    if (rerunFrom && !offered.has(row.step)) {
      offered.add(row.step);
      const button = el(
        "button",
        { type: "button", class: "rerun-from", "data-rerun-from": row.step },
        "Rerun from here",
      );
      button.addEventListener("click", () => rerunFrom(row.step));
      item.append(button);
    }
    list.append(item);
  }
  if (model.marks.length) list.append(marksItem(model.marks, axis));
  const end = model.outcome;
  const stillGoing = end.status === "running" || end.status === "waiting";
  list.append(
    el(
      "li",
      { class: `final outcome-${end.status}`, "data-outcome": end.status },
      el("span", { class: "label" }, stillGoing ? `still ${end.status}` : `workflow ${end.status}`),
      el(
        "span",
        { class: "detail" },
        stillGoing ? `${formatDuration(total)} so far` : `after ${formatDuration(total)}`,
      ),
    ),
  );
  /** @param {string} className @param {string} text */
  const key = (className, text) => [el("span", { class: `key ${className}` }), ` ${text} `];
  clear(section).append(
    el("h3", { id: "timeline-heading" }, "Timeline"),
    el(
      "p",
      { class: "axis", "aria-hidden": "true" },
      el("span", {}, "0"),
      el("span", {}, formatDuration(total / 2)),
      el("span", {}, formatDuration(total)),
    ),
    list,
    el(
      "p",
      { class: "legend" },
      ...key("outcome-completed", "completed"),
      ...key("outcome-failed", "failed"),
      ...key("outcome-running", "running"),
      ...key("wait", "waiting to retry"),
      ...key("rollback", "a rollback (undoing a step after the run failed)"),
      ...PAUSE_KINDS.flatMap((kind) => key(`pause-${kind.pause}`, kind.legend)),
    ),
  );
}
