// @ts-check
// A project's workflow runs: filtered as `workflow.list`
// filters (kept in the page's address, so a filtered list can be reloaded and
// shared), paged newest first, and acted on in bulk: the runs selected on the
// page, or all that match the filters, after a confirmation that says how many.
import { appendTo, clear, el, field, formatTime, shortRunId } from "./dom.js";

const RUN_STATUSES = ["queued", "running", "waiting", "paused", "completed", "failed", "cancelled"];
const RUN_PAGE_SIZE = 20;
/** The filter fields the list form offers, as `workflow.list` names them. */
export const FILTER_FIELDS = ["name", "status", "step", "since", "until", "error", "idPrefix", "version"];
const UNIT_MS = /** @type {Record<string, number>} */ ({ s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 });

/**
 * @typedef {{
 *   api: (method: string, path: string, body?: unknown) => Promise<any>,
 *   errorText: (error: unknown) => string,
 *   announce: (message: string) => void,
 *   runHref: (runId: string) => string,
 *   listHref: (query: URLSearchParams) => string,
 * }} RunListContext
 */

/**
 * A time filter as typed (`2h`, `15m`, `7d` ago, an ISO date, or epoch ms) as epoch ms; null when it is none of those.
 * @param {string} text @param {number} now
 */
export function timeFilterOf(text, now) {
  const relative = /^(\d{1,9})(s|m|h|d)$/.exec(text.trim());
  if (relative) return now - Number(relative[1]) * /** @type {number} */ (UNIT_MS[/** @type {string} */ (relative[2])]);
  if (/^\d{1,16}$/.test(text.trim())) return Number(text.trim());
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : Number.NaN;
  return Number.isNaN(parsed) ? null : parsed;
}

/**
 * The API filter of the form's values (times read now); throws a message for a time it cannot read.
 * @param {URLSearchParams} given @param {number} now
 */
export function apiFilterOf(given, now) {
  /** @type {Record<string, string | number>} */
  const filter = {};
  for (const key of FILTER_FIELDS) {
    const value = given.get(key)?.trim();
    if (!value) continue;
    if (key === "since" || key === "until") {
      const at = timeFilterOf(value, now);
      if (at === null) throw new Error(`${key}: use 2h, 15m, 7d (ago), an ISO date or epoch milliseconds.`);
      filter[key] = at;
    } else filter[key] = value;
  }
  return filter;
}

/**
 * @param {string} slug @param {{ name: string }[]} workflows @param {URLSearchParams} initial  the filters in the address
 * @param {RunListContext} context
 */
export function runsSection(slug, workflows, initial, context) {
  const section = el(
    "section",
    { "aria-labelledby": "runs-heading" },
    el("h3", { id: "runs-heading" }, "Workflow runs"),
  );
  // Runs are listed by the project's own workflow routes, which exist only when its code registers a workflow.
  if (!workflows.length) return appendTo(section, el("p", {}, "No runs: this project registers no workflows."));
  const runsPath = `/projects/${encodeURIComponent(slug)}/workflows`;
  const text = (/** @type {string} */ name, /** @type {string} */ label, /** @type {string} */ hint) =>
    field(label, el("input", { name, value: initial.get(name) ?? "", placeholder: hint, autocomplete: "off" }));
  const select = (/** @type {string} */ name, /** @type {string} */ label, /** @type {string[]} */ options) => {
    const control = el(
      "select",
      { name },
      el("option", { value: "" }, "any"),
      ...options.map((o) => el("option", { value: o }, o)),
    );
    /** @type {HTMLSelectElement} */ (control).value = initial.get(name) ?? "";
    return field(label, control);
  };
  const filters = /** @type {HTMLFormElement} */ (
    el(
      "form",
      { id: "run-filters", class: "inline" },
      select(
        "name",
        "Workflow",
        workflows.map((w) => w.name),
      ),
      select("status", "Status", RUN_STATUSES),
      text("step", "Step", "charge"),
      text("since", "Started since", "2h"),
      text("until", "Started before", "2026-11-25"),
      text("error", "Error contains", "card_declined"),
      text("idPrefix", "Run id starts with", ""),
      text("version", "Version", "v3"),
      el("button", { type: "submit" }, "Show runs"),
    )
  );
  const body = el("tbody", {});
  const status = el("p", { role: "status" });
  const more = /** @type {HTMLButtonElement} */ (el("button", { type: "button", hidden: "" }, "Older runs"));
  const selectAll = /** @type {HTMLInputElement} */ (
    el("input", { type: "checkbox", id: "select-all-runs", "aria-label": "Select all runs shown" })
  );
  /** @type {string | undefined} */
  let cursor;
  const selected = () =>
    [...body.querySelectorAll("input[type=checkbox]:checked")].map(
      (box) => /** @type {HTMLInputElement} */ (box).value,
    );

  const load = async (/** @type {boolean} */ append) => {
    const query = new URLSearchParams({ limit: String(RUN_PAGE_SIZE) });
    try {
      for (const [key, value] of Object.entries(
        apiFilterOf(new URLSearchParams(/** @type {any} */ (new FormData(filters))), Date.now()),
      ))
        query.set(key, String(value));
    } catch (error) {
      status.textContent = `Could not list runs: ${error instanceof Error ? error.message : String(error)}`;
      return;
    }
    if (append && cursor) query.set("cursor", cursor);
    status.textContent = "Loading runs…";
    try {
      const page = await context.api("GET", `${runsPath}?${query}`);
      if (!append) {
        clear(body);
        selectAll.checked = false;
      }
      for (const run of page.runs) body.append(runRow(run));
      cursor = page.cursor;
      more.hidden = !cursor;
      const shown = body.childElementCount;
      status.textContent = shown
        ? `${shown} run${shown === 1 ? "" : "s"} shown, newest first${cursor ? "; older runs follow" : ""}.`
        : "No runs match.";
    } catch (error) {
      status.textContent = `Could not list runs: ${context.errorText(error)}`;
    }
  };

  /** @param {any} run */
  const runRow = (run) =>
    el(
      "tr",
      { "data-run-id": run.id, "data-status": run.status },
      el(
        "td",
        {},
        el("input", { type: "checkbox", name: "run", value: run.id, "aria-label": `Select run ${shortRunId(run.id)}` }),
      ),
      el("td", {}, el("a", { href: context.runHref(run.id), title: run.id }, shortRunId(run.id))),
      el("td", {}, run.name),
      el("td", {}, el("span", { class: `badge status-${run.status}` }, run.status)),
      el("td", {}, run.step ?? ""),
      el("td", {}, run.version ?? ""),
      el("td", {}, formatTime(run.createdAt)),
      el("td", {}, formatTime(run.updatedAt)),
    );

  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    cursor = undefined;
    const kept = new URLSearchParams();
    for (const key of FILTER_FIELDS) {
      const value = String(new FormData(filters).get(key) ?? "").trim();
      if (value) kept.set(key, value);
    }
    // The filters live in the address (no navigation: the page stays as it is).
    history.replaceState(null, "", context.listHref(kept));
    void load(false);
  });
  more.addEventListener("click", () => void load(true));
  selectAll.addEventListener("change", () => {
    for (const box of body.querySelectorAll("input[type=checkbox]")) {
      /** @type {HTMLInputElement} */ (box).checked = selectAll.checked;
    }
  });

  section.append(
    filters,
    bulkActions(runsPath, filters, selected, context, () => void load(false)),
    el(
      "table",
      { id: "runs" },
      el("caption", { class: "visually-hidden" }, "Workflow runs, newest first"),
      el(
        "thead",
        {},
        el(
          "tr",
          {},
          el("th", { scope: "col" }, selectAll),
          ...["Run", "Workflow", "Status", "Step", "Version", "Started", "Last event"].map((h) =>
            el("th", { scope: "col" }, h),
          ),
        ),
      ),
      body,
    ),
    status,
    more,
  );
  void load(false);
  return section;
}

/**
 * Cancel or rerun the selected runs, or all that match the filters, after a confirmation naming how many.
 * @param {string} runsPath @param {HTMLFormElement} filters @param {() => string[]} selected
 * @param {RunListContext} context @param {() => void} reload
 */
function bulkActions(runsPath, filters, selected, context, reload) {
  const scope = el(
    "fieldset",
    { class: "inline" },
    el("legend", {}, "Act on"),
    el(
      "label",
      {},
      el("input", { type: "radio", name: "bulk-scope", value: "selected", checked: "" }),
      " the selected runs",
    ),
    el(
      "label",
      {},
      el("input", { type: "radio", name: "bulk-scope", value: "matching" }),
      " all runs that match the filters",
    ),
  );
  const fromStep = /** @type {HTMLInputElement} */ (
    el("input", { name: "fromStep", autocomplete: "off", placeholder: "start" })
  );
  const cancelButton = el("button", { type: "button", "data-bulk": "cancel" }, "Cancel runs…");
  const rerunButton = el("button", { type: "button", "data-bulk": "rerun" }, "Rerun runs…");
  const confirmation = el("div", { id: "bulk-confirm", role: "alertdialog", "aria-live": "assertive", hidden: "" });
  const outcome = el("p", { role: "status", id: "bulk-outcome" });
  const matching = () => /** @type {HTMLInputElement} */ (scope.querySelector("input[value=matching]")).checked;

  const ask = async (/** @type {"cancel" | "rerun"} */ kind) => {
    outcome.textContent = "";
    const step = fromStep.value.trim();
    const options = kind === "rerun" && step ? { fromStep: step } : {};
    /** @type {number} */
    let count;
    /** @type {Record<string, string | number>} */
    let filter = {};
    const ids = selected();
    try {
      if (matching()) {
        filter = apiFilterOf(new URLSearchParams(/** @type {any} */ (new FormData(filters))), Date.now());
        count = (await context.api("POST", `${runsPath}/${kind}`, { filter, ...options, dryRun: true })).matched;
      } else count = ids.length;
    } catch (error) {
      outcome.textContent = context.errorText(error);
      return;
    }
    if (count === 0) {
      outcome.textContent = matching() ? "No runs match the filters." : "Select runs first.";
      return;
    }
    const verb = kind === "cancel" ? "Cancel" : `Rerun${step ? ` from step ${step}` : ""}`;
    const confirm = el(
      "button",
      { type: "button", id: "bulk-confirm-yes" },
      `${verb} ${count} run${count === 1 ? "" : "s"}`,
    );
    const back = el("button", { type: "button" }, "Go back");
    clear(confirmation).append(
      el("p", {}, `${verb} ${count} run${count === 1 ? "" : "s"}${matching() ? " (all that match the filters)" : ""}?`),
      confirm,
      back,
    );
    confirmation.hidden = false;
    /** @type {HTMLElement} */ (confirm).focus();
    back.addEventListener("click", () => {
      confirmation.hidden = true;
    });
    confirm.addEventListener("click", async () => {
      confirmation.hidden = true;
      try {
        const result = matching()
          ? await context.api("POST", `${runsPath}/${kind}`, { filter, ...options })
          : await eachSelected(runsPath, kind, ids, options, context);
        const done = kind === "cancel" ? "cancelled" : "rerun";
        outcome.textContent = `${result.matched} run(s) matched; ${result.affected} ${done}.`;
        context.announce(outcome.textContent);
        reload();
      } catch (error) {
        outcome.textContent = context.errorText(error);
      }
    });
  };
  cancelButton.addEventListener("click", () => void ask("cancel"));
  rerunButton.addEventListener("click", () => void ask("rerun"));
  return el(
    "div",
    { id: "bulk-actions" },
    scope,
    cancelButton,
    field("Rerun from step (optional)", fromStep),
    rerunButton,
    confirmation,
    outcome,
  );
}

/**
 * The selected runs one by one (a run that finished meanwhile, or cannot be rerun, is not affected).
 * @param {string} runsPath @param {"cancel" | "rerun"} kind @param {string[]} ids @param {object} options
 * @param {RunListContext} context
 */
async function eachSelected(runsPath, kind, ids, options, context) {
  let affected = 0;
  for (const id of ids) {
    try {
      await context.api("POST", `${runsPath}/${encodeURIComponent(id)}/${kind}`, kind === "cancel" ? {} : options);
      affected++;
    } catch {
      // Counted as not affected, as a bulk operation counts it.
    }
  }
  return { matched: ids.length, affected };
}
