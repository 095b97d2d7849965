// @ts-check
// A run's failed attempts and what each threw (step_failed's `error`: name, message and the stack
// the platform maps to the project's sources), beneath its timeline.
import { clear, el } from "./dom.js";

/**
 * @typedef {{ name?: string, message?: string, stack?: string, cause?: ErrorView }} ErrorView
 * @typedef {{ step: string, attempt: number, reason: string, error: ErrorView | null }} StepErrorRow
 */

/**
 * Each failed attempt of a run, oldest first, with its error when the attempt threw one.
 * @param {{ events: { type: string, payload: Record<string, any> }[] }} view
 * @returns {StepErrorRow[]}
 */
export function stepErrors(view) {
  return view.events
    .filter((event) => event.type === "step_failed")
    .map((event) => ({
      step: String(event.payload.step),
      attempt: Number(event.payload.attempt),
      reason: String(event.payload.reason),
      error: event.payload.error ?? null,
    }));
}

/** An error and its causes as text: `Error: kaboom`, its stack's frames, then `Caused by: …`. @param {ErrorView} error */
export function errorText(error) {
  /** @type {string[]} */
  const parts = [];
  /** @type {ErrorView | undefined} */
  let current = error;
  for (let depth = 0; current && depth < 4; depth++) {
    const heading = `${depth ? "Caused by: " : ""}${current.name ?? "Error"}: ${current.message ?? ""}`;
    const frames = (current.stack ?? "").split("\n").filter((line) => line.trim().startsWith("at "));
    parts.push([heading, ...frames].join("\n"));
    current = current.cause;
  }
  return parts.join("\n");
}

/**
 * @param {HTMLElement} section
 * @param {{ events: { type: string, payload: Record<string, any> }[] }} view
 */
export function renderStepErrors(section, view) {
  const rows = stepErrors(view);
  section.hidden = rows.length === 0;
  clear(section).append(el("h3", { id: "errors-heading" }, "Failed attempts"));
  for (const row of rows)
    section.append(
      el(
        "details",
        { open: "" },
        el("summary", {}, `${row.step}#${row.attempt}: ${row.reason}`),
        row.error
          ? el("pre", { class: "stack", tabindex: "0" }, errorText(row.error))
          : el("p", {}, "Nothing was thrown."),
      ),
    );
}
