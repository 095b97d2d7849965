// @ts-check
// What a person can do to one run from its page: cancel it
// while it runs, send the event it waits for, start it again with the same
// data. Each acts through the API worker's routes, as the CLI does.
import { alertForm, appendTo, el, field, jsonField, onSubmit } from "./dom.js";

/**
 * @typedef {{
 *   api: (method: string, path: string, body?: unknown) => Promise<any>,
 *   errorText: (error: unknown) => string,
 *   announce: (message: string) => void,
 *   runHref: (runId: string) => string,
 *   refresh: () => void,
 * }} RunControlsContext
 */

/** Which controls a view needs; the section is redrawn only when this changes, so typing is never lost. @param {any} view */
export function runControlsKey(view) {
  return `${view.status}|${view.waitingFor?.name ?? ""}`;
}

/**
 * The data the run started with: its workflow_created event's `writes.data`, or the last
 * start_replaced's when debounced starts replaced it. @param {any} view
 */
export function startDataOf(view) {
  const lastData = view.events.findLast(
    (/** @type {any} */ e) => e.type === "workflow_created" || e.type === "start_replaced",
  );
  return lastData?.payload?.writes?.data ?? null;
}

/**
 * @param {HTMLElement} section @param {string} slug @param {any} view @param {RunControlsContext} context
 */
export function renderRunControls(section, slug, view, context) {
  const runPath = `/projects/${encodeURIComponent(slug)}/workflows/${encodeURIComponent(view.id)}`;
  section.replaceChildren(el("h3", { id: "controls-heading" }, "Actions"));
  if (view.status === "running" || view.status === "queued") {
    if (view.waitingFor) section.append(sendEventForm(runPath, view, context));
    section.append(cancelForm(runPath, context));
  }
  section.append(runAgainForm(slug, view, context));
}

/** @param {string} runPath @param {RunControlsContext} context */
function cancelForm(runPath, context) {
  const { form, error } = alertForm(
    "cancel-run",
    field("Reason (optional)", el("input", { name: "reason", maxlength: "500", autocomplete: "off" })),
    el("button", { type: "submit" }, "Cancel run"),
  );
  onSubmit(form, error, context.errorText, async (values) => {
    const reason = String(values.get("reason") ?? "").trim();
    await context.api("POST", `${runPath}/cancel`, reason ? { reason } : {});
    context.announce("The run was cancelled.");
    context.refresh();
  });
  return form;
}

/** @param {string} runPath @param {any} view @param {RunControlsContext} context */
function sendEventForm(runPath, view, context) {
  const { form, error } = alertForm(
    "send-event",
    field(
      "Event name",
      el("input", { name: "name", maxlength: "100", autocomplete: "off", required: "", value: view.waitingFor.name }),
    ),
    field("Payload (JSON)", el("textarea", { name: "payload", rows: "3", cols: "50", spellcheck: "false" }, "{}")),
    el("button", { type: "submit" }, "Send event"),
  );
  onSubmit(form, error, context.errorText, async (values) => {
    const payload = jsonField(values, "payload", "Payload", error, context.errorText);
    if (payload === undefined) return;
    const name = String(values.get("name") ?? "");
    await context.api("POST", `${runPath}/events`, { name, payload });
    context.announce(`Event "${name}" sent.`);
    context.refresh();
  });
  return appendTo(el("div", {}, el("p", {}, `This run waits for the event "${view.waitingFor.name}".`)), form);
}

/** @param {string} slug @param {any} view @param {RunControlsContext} context */
function runAgainForm(slug, view, context) {
  const { form, error } = alertForm(
    "run-again",
    el("button", { type: "submit" }, "Run again"),
    el("span", { class: "meta" }, ` a new run of ${view.name} with the same data`),
  );
  onSubmit(form, error, context.errorText, async () => {
    const started = await context.api("POST", `/projects/${encodeURIComponent(slug)}/workflows`, {
      name: view.name,
      data: startDataOf(view),
    });
    context.announce("A new run started.");
    location.hash = context.runHref(started.runId);
  });
  return form;
}
