// @ts-check
// What a person can do to one run from its page: cancel it
// while it runs or waits in its queue, send the event it waits for, pause and
// resume it, rerun it once it finished (a new run with the same data that
// links back to it; from a step: the timeline's "Rerun from here"). Each acts
// through the API worker's routes, as the CLI does.
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
 * @param {HTMLElement} section @param {string} slug @param {any} view @param {RunControlsContext} context
 */
export function renderRunControls(section, slug, view, context) {
  const runPath = `/projects/${encodeURIComponent(slug)}/workflows/${encodeURIComponent(view.id)}`;
  section.replaceChildren(el("h3", { id: "controls-heading" }, "Actions"));
  if (["running", "waiting", "paused", "queued"].includes(view.status)) {
    if (view.waitingFor) section.append(sendEventForm(runPath, view, context));
    // A queued run has not started: there is nothing to pause yet.
    if (view.status !== "queued")
      section.append(view.status === "paused" ? resumeForm(runPath, context) : pauseForm(runPath, context));
    section.append(cancelForm(runPath, context));
  } else section.append(runAgainForm(runPath, view, context));
}

/** @param {string} runPath @param {RunControlsContext} context */
function pauseForm(runPath, context) {
  return reasonForm(runPath, context, "pause", "The run is paused: it starts no new step until resumed.");
}

/** @param {string} runPath @param {RunControlsContext} context */
function resumeForm(runPath, context) {
  const { form, error } = alertForm("resume-run", el("button", { type: "submit" }, "Resume run"));
  onSubmit(form, error, context.errorText, async () => {
    await context.api("POST", `${runPath}/resume`, {});
    context.announce("The run was resumed.");
    context.refresh();
  });
  return form;
}

/** @param {string} runPath @param {RunControlsContext} context */
function cancelForm(runPath, context) {
  return reasonForm(runPath, context, "cancel", "The run was cancelled.");
}

/**
 * A control that takes an optional reason (`{ reason? }`): pause and cancel.
 * @param {string} runPath @param {RunControlsContext} context @param {"pause" | "cancel"} control @param {string} done
 */
function reasonForm(runPath, context, control, done) {
  const { form, error } = alertForm(
    `${control}-run`,
    field("Reason (optional)", el("input", { name: "reason", maxlength: "500", autocomplete: "off" })),
    el("button", { type: "submit" }, control === "pause" ? "Pause run" : "Cancel run"),
  );
  onSubmit(form, error, context.errorText, async (values) => {
    const reason = String(values.get("reason") ?? "").trim();
    await context.api("POST", `${runPath}/${control}`, reason ? { reason } : {});
    context.announce(done);
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

/** A rerun from the start (`workflow.rerun`): the new run records this one as its `rerunOf`. @param {string} runPath @param {any} view @param {RunControlsContext} context */
function runAgainForm(runPath, view, context) {
  const { form, error } = alertForm(
    "run-again",
    el("button", { type: "submit" }, "Run again"),
    el("span", { class: "meta" }, ` a new run of ${view.name} with the same data (or rerun from a step below)`),
  );
  onSubmit(form, error, context.errorText, async () => {
    const started = await context.api("POST", `${runPath}/rerun`, {});
    context.announce("A new run started.");
    location.hash = context.runHref(started.runId);
  });
  return form;
}
