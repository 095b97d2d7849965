// @ts-check
// Building the console's DOM from data without innerHTML: text stays text.

/**
 * `el("a", { href: "#/p/x" }, "x")`. Attributes starting with "on" are event
 * listeners; children are nodes or strings (added as text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | ((event: Event) => unknown)>} attributes
 * @param {...(Node | string)} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function el(tag, attributes, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === "function") element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value);
  }
  element.append(...children);
  return element;
}

/** Empties an element and returns it. @template {HTMLElement} E @param {E} element @returns {E} */
export function clear(element) {
  element.replaceChildren();
  return element;
}

/** A time as the reader's locale shows it, with seconds. @param {number | string | null} value */
export function formatTime(value) {
  if (value === null) return "";
  const date = new Date(value);
  return Number.isNaN(date.getTime())
    ? String(value)
    : date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

/** Run ids are `<64 hex>.<suffix>`: the list shows the first 8 hex and the suffix. @param {string} runId */
export function shortRunId(runId) {
  const [actor, suffix] = runId.split(".");
  return suffix && actor && actor.length > 8 ? `${actor.slice(0, 8)}….${suffix}` : runId;
}

let fieldCount = 0;

/**
 * A label and its control, tied by id (so the label's text alone names the control).
 * @param {string} text @param {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} control
 */
export function field(text, control) {
  control.id ||= `field-${++fieldCount}`;
  return el("div", { class: "field" }, el("label", { for: control.id }, text), " ", control);
}

/** Appends and returns the parent, so a view can end with `return appendTo(section, …)`. @template {HTMLElement} E @param {E} parent @param {...(Node | string)} children @returns {E} */
export function appendTo(parent, ...children) {
  parent.append(...children);
  return parent;
}

/**
 * The JSON a form field holds, or undefined once `error` says why it is not JSON
 * (JSON.parse never yields undefined, so the caller can tell).
 * @param {FormData} values @param {string} name @param {string} label
 * @param {HTMLElement} error @param {(error: unknown) => string} errorText
 * @returns {unknown}
 */
export function jsonField(values, name, label, error, errorText) {
  try {
    return JSON.parse(String(values.get(name) ?? ""));
  } catch (parseError) {
    error.textContent = `${label} must be JSON: ${errorText(parseError)}`;
    return undefined;
  }
}

/**
 * Runs `action` with the form's values on submit (the page stays), showing in
 * `error` why it failed: one place for every console form's submit and catch.
 * @param {HTMLFormElement} form @param {HTMLElement} error
 * @param {(error: unknown) => string} errorText
 * @param {(values: FormData) => Promise<void>} action
 */
export function onSubmit(form, error, errorText, action) {
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    error.textContent = "";
    try {
      await action(new FormData(form));
    } catch (failure) {
      error.textContent = errorText(failure);
    }
  });
}

/**
 * A form whose last line is its alert (where `onSubmit` says why an action failed).
 * @param {string} id @param {...(Node | string)} children
 * @returns {{ form: HTMLFormElement, error: HTMLElement }}
 */
export function alertForm(id, ...children) {
  const error = el("p", { class: "error", role: "alert" });
  const form = /** @type {HTMLFormElement} */ (el("form", { id }, ...children, error));
  return { form, error };
}
