// @ts-check
// The console: plain browser modules, no framework and no build step. It
// reads and acts through the API worker's JSON routes with the CLI user's
// token, which stays in this tab's sessionStorage. Every value from the API
// reaches the page as text (never as HTML).
import { alertForm, appendTo, clear, el, field, formatTime, jsonField, onSubmit, shortRunId } from "./dom.js";
import { renderRunControls, runControlsKey } from "./runControls.js";
import { runsSection } from "./runList.js";
import { renderTimeline } from "./timelineView.js";
import { followStream, renderStreamSection } from "./streamView.js";
import { logsSection } from "./logsView.js";
import { webhooksSection } from "./webhooksView.js";
import { outboxSection } from "./outbox.js";
import { chatWindowSection } from "./chatWindow.js";
import { renderStepErrors } from "./stepErrorsView.js";
import { providerCallsHeading } from "./triggerReport.js";

const TOKEN_KEY = "platform-console-token";
const LIVE_INTERVAL_MS = 1000;
/** Statuses of a run that has not finished (a paused one may be resumed). */
const LIVE_STATUSES = ["queued", "running", "waiting", "paused"];
const RECOVERY_CRON = "__workflow-recovery";
const alternatives = new Intl.ListFormat("en-GB", { style: "long", type: "disjunction" });

/**
 * A plugin of the platform as `GET /plugins` describes it (src/workers/api/pluginCatalogRoute.ts).
 * @typedef {{ id: string, title: string, resourceType: string | null, uninstalls: boolean, instead: string | null,
 *   triggerKinds: string[], commandKind: string | null, triggerParameters: Record<string, unknown[]> }} PluginSummary
 */

const main = /** @type {HTMLElement} */ (document.getElementById("main"));
const signInSection = /** @type {HTMLElement} */ (document.getElementById("sign-in"));
const signInForm = /** @type {HTMLFormElement} */ (document.getElementById("sign-in-form"));
const signInError = /** @type {HTMLElement} */ (document.getElementById("sign-in-error"));
const signOutButton = /** @type {HTMLButtonElement} */ (document.getElementById("sign-out"));
const signedInAs = /** @type {HTMLElement} */ (document.getElementById("signed-in-as"));
const projectNav = /** @type {HTMLElement} */ (document.getElementById("projects"));
const announcer = /** @type {HTMLElement} */ (document.getElementById("announcer"));

class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The dev-only routes the platform's API has (`outbox` under `platform dev`); none under `platform up` or deployed. */
let localRoutes = /** @type {string[]} */ ([]);

/**
 * One call to the API worker (same origin). A 401 forgets the token and shows the sign-in form.
 * @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<any>}
 */
async function api(method, path, body) {
  const headers = /** @type {Record<string, string>} */ ({
    authorization: `Bearer ${sessionStorage.getItem(TOKEN_KEY) ?? ""}`,
  });
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: "no-store",
  });
  // Only `platform dev`'s API names dev-only routes (src/dev/routes/devApiWorker.ts); none are requested elsewhere.
  if (path === "/cli/whoami" && response.ok)
    localRoutes = (response.headers.get("x-platform-local-routes") ?? "").split(" ").filter(Boolean);
  const json = await response.json().catch(() => null);
  if (response.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    showSignIn(json?.error?.message ?? "Sign in again.");
  }
  if (!response.ok)
    throw new ApiError(
      response.status,
      json?.error?.code ?? "error",
      json?.error?.message ?? `The platform answered ${response.status}.`,
    );
  return json;
}

/** Says something to screen readers (and shows it in the status line). @param {string} message */
function announce(message) {
  announcer.textContent = message;
}

/** @param {unknown} error */
function errorText(error) {
  return error instanceof Error ? error.message : String(error);
}

// ---- sign-in ---------------------------------------------------------------

const TOKEN_FRAGMENT = /^#token=(plt_[A-Za-z0-9_-]{43})$/;

/** The account a CLI token acts as, or null when the API does not take it. @param {string} token */
async function accountOf(token) {
  const response = await fetch("/cli/whoami", { headers: { authorization: `Bearer ${token}` }, cache: "no-store" });
  if (!response.ok) return null;
  return /** @type {{ email: string }} */ (await response.json()).email;
}

/**
 * `platform console` opens the console with the CLI token in the fragment
 * (never sent to a server); it is dropped from the address bar at once. It
 * signs in a console that is not signed in, or signed in as the same
 * account; over another account it replaces nothing until the person says
 * so, since anyone can send a link that signs the console in as them.
 */
async function takeTokenFromFragment() {
  const match = TOKEN_FRAGMENT.exec(location.hash);
  if (!match) return;
  history.replaceState(null, "", `${location.pathname}#/`);
  const offered = /** @type {string} */ (match[1]);
  const current = sessionStorage.getItem(TOKEN_KEY);
  if (current === offered) return;
  const [mine, theirs] = await Promise.all([current ? accountOf(current) : null, accountOf(offered)]);
  if (!theirs) {
    announce(
      mine ? `The link's sign-in is not valid: still signed in as ${mine}.` : "The link's sign-in is not valid.",
    );
    return;
  }
  if (mine && mine !== theirs && !(await confirmSwitch(mine, theirs))) {
    announce(`Still signed in as ${mine}.`);
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, offered);
}

/** Asks whether to leave `mine` for `theirs`; resolves with the answer. @param {string} mine @param {string} theirs */
function confirmSwitch(mine, theirs) {
  // The dialog's own elements, used nowhere else.
  const switchSection = /** @type {HTMLElement} */ (document.getElementById("switch-account"));
  const switchText = /** @type {HTMLElement} */ (document.getElementById("switch-text"));
  const switchConfirm = /** @type {HTMLButtonElement} */ (document.getElementById("switch-confirm"));
  const switchKeep = /** @type {HTMLButtonElement} */ (document.getElementById("switch-keep"));
  stopLive();
  main.hidden = true;
  projectNav.hidden = true;
  signInSection.hidden = true;
  switchText.textContent = `This link signs the console in as ${theirs}. You are signed in as ${mine}.`;
  switchConfirm.textContent = `Switch to ${theirs}`;
  switchKeep.textContent = `Stay signed in as ${mine}`;
  switchSection.hidden = false;
  switchKeep.focus();
  return new Promise((resolve) => {
    /** @param {boolean} answer */
    const answer = (answer) => () => {
      switchSection.hidden = true;
      resolve(answer);
    };
    switchConfirm.onclick = answer(true);
    switchKeep.onclick = answer(false);
  });
}

/** @param {string} [message] */
function showSignIn(message) {
  stopLive();
  signInSection.hidden = false;
  main.hidden = true;
  projectNav.hidden = true;
  signOutButton.hidden = true;
  signedInAs.hidden = true;
  signInError.textContent = message ?? "";
  /** @type {HTMLInputElement} */ (signInForm.elements.namedItem("token")).focus();
}

signInForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ (signInForm.elements.namedItem("token"));
  const token = input.value.trim();
  if (!/^plt_[A-Za-z0-9_-]{43}$/.test(token)) {
    signInError.textContent = "That is not a CLI token: it starts with plt_ and has 47 characters.";
    return;
  }
  sessionStorage.setItem(TOKEN_KEY, token);
  input.value = "";
  await start();
});

signOutButton.addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  showSignIn("Signed out.");
});

// ---- navigation ------------------------------------------------------------

/** @type {{ slug: string }[]} */
let projects = [];
/** Bumped on every navigation so a view's pending work (live polling) knows it is gone. */
let viewGeneration = 0;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let liveTimer;

function stopLive() {
  clearTimeout(liveTimer);
  viewGeneration++;
}

/** @param {string} slug @param {string} [runId] @param {URLSearchParams} [query]  a project's run filters */
function hrefFor(slug, runId, query) {
  const filters = query?.size ? `?${query}` : "";
  return `#/p/${encodeURIComponent(slug)}${runId ? `/runs/${encodeURIComponent(runId)}` : ""}${filters}`;
}

async function start() {
  if (!sessionStorage.getItem(TOKEN_KEY)) return showSignIn();
  let email;
  try {
    [{ email }, { projects }] = await Promise.all([api("GET", "/cli/whoami"), api("GET", "/projects")]);
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) showSignIn(errorText(error));
    return;
  }
  signInSection.hidden = true;
  main.hidden = false;
  projectNav.hidden = false;
  signOutButton.hidden = false;
  signedInAs.textContent = `Signed in as ${email}`;
  signedInAs.hidden = false;
  renderProjectNav();
  await route();
}

function renderProjectNav() {
  const list = el("ul", {});
  for (const project of projects)
    list.append(el("li", {}, el("a", { href: hrefFor(project.slug), "data-slug": project.slug }, project.slug)));
  clear(projectNav).append(
    el("h2", { id: "projects-heading" }, "Projects"),
    projects.length ? list : el("p", {}, "No projects yet: run platform dev or platform push."),
  );
}

async function route() {
  stopLive();
  const [path = "", search = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const link of projectNav.querySelectorAll("a")) link.removeAttribute("aria-current");
  if (parts[0] !== "p" || !parts[1]) {
    const first = projects[0];
    if (first) location.replace(hrefFor(first.slug));
    else
      clear(main).append(
        el("h2", {}, "No projects"),
        el("p", {}, "Run platform dev in a project directory, or platform push, and it appears here."),
      );
    return;
  }
  const slug = parts[1];
  projectNav.querySelector(`a[data-slug="${CSS.escape(slug)}"]`)?.setAttribute("aria-current", "page");
  if (parts[2] === "runs" && parts[3]) await showRun(slug, parts[3]);
  else await showProject(slug, new URLSearchParams(search));
}

window.addEventListener("hashchange", async () => {
  // A `#token=` link opened in this tab again: the same rules as on load.
  if (TOKEN_FRAGMENT.test(location.hash)) {
    await takeTokenFromFragment();
    await start();
  } else await route();
});

// ---- a project ---------------------------------------------------------------

/** @param {string} slug @param {URLSearchParams} [filters]  the run list's filters, from the address */
async function showProject(slug, filters = new URLSearchParams()) {
  const generation = viewGeneration;
  clear(main).append(el("h2", { tabindex: "-1" }, `Project ${slug}`), el("p", { role: "status" }, "Loading…"));
  let project, plugins, catalog;
  try {
    [{ project }, plugins, { plugins: catalog }] = await Promise.all([
      api("GET", `/projects/${encodeURIComponent(slug)}`),
      api("GET", `/projects/${encodeURIComponent(slug)}/plugins`),
      api("GET", "/plugins"),
    ]);
  } catch (error) {
    if (generation === viewGeneration)
      clear(main).append(el("h2", {}, `Project ${slug}`), el("p", { class: "error", role: "alert" }, errorText(error)));
    return;
  }
  if (generation !== viewGeneration) return;
  const heading = el("h2", { tabindex: "-1" }, `Project ${slug}`);
  clear(main).append(
    heading,
    el(
      "p",
      { class: "meta" },
      `${project.private ? "Private" : "Public"} · worker ${project.scriptName} · created ${formatTime(project.createdAt)}`,
    ),
    pluginsSection(plugins, catalog),
    cronsSection(slug, project.crons, project.schedules ?? []),
    startWorkflowSection(slug, project.workflows),
    testEventSection(slug, plugins.resources, catalog),
    chatWindowSection(slug, plugins, catalog, {
      api,
      errorText,
      announce,
      isCurrent: () => generation === viewGeneration,
    }),
    runsSection(slug, project.workflows, filters, {
      api,
      errorText,
      announce,
      runHref: (runId) => hrefFor(slug, runId),
      listHref: (query) => hrefFor(slug, undefined, query),
    }),
    webhooksSection(slug, { api, errorText, runHref: (runId) => hrefFor(slug, runId) }),
    logsSection(slug, { api, errorText, isCurrent: () => generation === viewGeneration }),
    ...(localRoutes.includes("outbox") ? [outboxSection(slug, { api, errorText })] : []),
  );
  heading.focus();
}

/**
 * A project view's section, named for screen readers by its heading (`<id>-heading`).
 * @param {string} id @param {string} title
 */
function headedSection(id, title) {
  return el("section", { "aria-labelledby": `${id}-heading` }, el("h3", { id: `${id}-heading` }, title));
}

/** @param {{ connections: any[], resources: any[] }} plugins @param {PluginSummary[]} catalog */
function pluginsSection({ connections, resources }, catalog) {
  const section = headedSection("plugins", "Plugin connections");
  if (!connections.length)
    section.append(
      el(
        "p",
        {},
        `No plugin connected. Connect one with platform plugin install ${alternatives.format(catalog.map((p) => p.id))}.`,
      ),
    );
  else
    section.append(
      table(
        "Plugin connections",
        ["Plugin", "Provider user", "Connected", "Token expires", "State"],
        connections.map((c) => [
          c.plugin,
          c.externalUserId,
          formatTime(c.connectedAt),
          c.tokenExpiresAt ? formatTime(c.tokenExpiresAt) : "never",
          connectionState(c),
        ]),
      ),
    );
  section.append(el("h4", {}, "Claimed resources"));
  const resourceTypes = [...new Set(catalog.flatMap((p) => (p.resourceType ? [p.resourceType] : [])))];
  if (!resources.length) section.append(el("p", {}, `No ${alternatives.format(resourceTypes)} claimed yet.`));
  else
    section.append(
      table(
        "Claimed resources",
        ["Plugin", "Kind", "Name", "Id", "Claimed", "Commands"],
        resources.map((r) => [
          r.plugin,
          r.type,
          r.displayName,
          r.externalId,
          formatTime(r.claimedAt),
          r.commands ? r.commands.map((/** @type {string} */ name) => `/${name}`).join(" ") || "none" : "",
        ]),
      ),
    );
  return section;
}

/** A connection's health: active, degraded (the plugin's cause and fix), needs reconnect (the provider's last error) or revoked. */
function connectionState(/** @type {any} */ c) {
  if (c.status === "revoked" || (!c.status && c.revoked)) return `revoked ${formatTime(c.revokedAt)}`;
  if (c.status === "needs_reconnect")
    return `needs reconnect: ${c.lastError} (${formatTime(c.lastErrorAt)}); run platform plugin install ${c.plugin}`;
  if (c.status === "degraded" && c.problem)
    return `degraded since ${formatTime(c.problem.since)}: ${c.problem.cause} Fix: ${c.problem.fix}`;
  return "active";
}

/**
 * The project's crons; a scheduled workflow's (`__schedule/<workflow>`) with its next tick, and a
 * button that starts the latest tick's run unless one was started (src/contracts/workflowSchedules.ts).
 * @param {string} slug
 * @param {{ name: string, schedule: string, timezone?: string }[]} crons
 * @param {{ workflow: string, cronName: string, nextAt: string | null }[]} schedules
 */
function cronsSection(slug, crons, schedules) {
  const section = headedSection("crons", "Crons");
  if (!crons.length) return appendTo(section, el("p", {}, "No crons registered."));
  const output = el("p", { class: "result", role: "status", "aria-live": "polite" });
  const scheduleOf = new Map(schedules.map((s) => [s.cronName, s]));
  section.append(
    table(
      "Crons",
      ["Name", "Schedule", "Next tick", ""],
      crons.map((cron) => {
        const scheduled = scheduleOf.get(cron.name);
        return [
          scheduled ? `${cron.name} (starts workflow ${scheduled.workflow})` : cron.name,
          `${cron.schedule} (${cron.timezone ?? "UTC"})`,
          scheduled ? (scheduled.nextAt === null ? "never" : formatTime(scheduled.nextAt)) : "",
          el(
            "button",
            {
              type: "button",
              onclick: (/** @type {Event} */ e) =>
                runCron(slug, cron.name, /** @type {HTMLButtonElement} */ (e.currentTarget), output),
            },
            cron.name === RECOVERY_CRON
              ? "Run recovery now"
              : scheduled
                ? `Run ${scheduled.workflow}'s latest tick`
                : `Run ${cron.name} now`,
          ),
        ];
      }),
    ),
    output,
  );
  return section;
}

/** @param {string} slug @param {string} name @param {HTMLButtonElement} button @param {HTMLElement} output */
async function runCron(slug, name, button, output) {
  button.disabled = true;
  output.className = "result";
  output.textContent = `Running ${name}…`;
  try {
    const answer = await api("POST", `/projects/${encodeURIComponent(slug)}/crons/${encodeURIComponent(name)}/run`);
    output.textContent = `${name}: ${answer.output ?? "done"}`;
  } catch (error) {
    output.className = "result error";
    output.textContent = `${name} failed: ${errorText(error)}`;
  } finally {
    button.disabled = false;
  }
}

/** @param {string} slug @param {{ name: string, steps: string[] }[]} workflows */
function startWorkflowSection(slug, workflows) {
  const section = headedSection("start", "Start a workflow");
  if (!workflows.length) return appendTo(section, el("p", {}, "This project registers no workflows."));
  const { form, error } = alertForm(
    "start-workflow",
    field(
      "Workflow",
      el(
        "select",
        { name: "name" },
        ...workflows.map((w) => el("option", { value: w.name }, `${w.name} (${w.steps.join(" → ")})`)),
      ),
    ),
    field("Data (JSON)", el("textarea", { name: "data", rows: "4", cols: "50", spellcheck: "false" }, "{}")),
    field(
      "Workflow id (optional; one active run per id)",
      el("input", { name: "id", maxlength: "200", autocomplete: "off" }),
    ),
    el("button", { type: "submit" }, "Start"),
  );
  onSubmit(form, error, errorText, async (values) => {
    const data = jsonField(values, "data", "Data", error, errorText);
    if (data === undefined) return;
    const id = String(values.get("id") ?? "").trim();
    const started = await api("POST", `/projects/${encodeURIComponent(slug)}/workflows`, {
      name: values.get("name"),
      data,
      ...(id ? { id } : {}),
    });
    announce(started.created ? "Workflow started." : "A run with that id is already active: showing it.");
    location.hash = hrefFor(slug, started.runId);
  });
  return appendTo(section, form);
}

/** @param {string} slug @param {{ plugin: string }[]} resources @param {PluginSummary[]} catalog */
function testEventSection(slug, resources, catalog) {
  const section = headedSection("test-event", "Send a bot test event");
  const withEvents = catalog.filter((p) => p.triggerKinds.length);
  const bots = withEvents.filter((p) => resources.some((r) => r.plugin === p.id));
  if (!bots.length)
    return appendTo(
      section,
      el(
        "p",
        {},
        `No bot installed: run platform plugin install ${alternatives.format(withEvents.map((p) => p.id))} first.`,
      ),
    );
  section.append(
    el("p", {}, "The local fake provider sends a signed webhook to the plugin, as platform plugin trigger does."),
  );
  const kind = /** @type {HTMLSelectElement} */ (el("select", { name: "kind" }));
  const plugin = /** @type {HTMLSelectElement} */ (
    el("select", { name: "plugin" }, ...bots.map((b) => el("option", { value: b.id }, b.id)))
  );
  const fillKinds = () =>
    clear(kind).append(
      // Clicks and submits are sent from the chat window, where what they act on is shown.
      ...(bots.find((b) => b.id === plugin.value)?.triggerKinds ?? [])
        .filter((k) => !bots.find((b) => b.id === plugin.value)?.triggerParameters[k])
        .map((k) => el("option", { value: k }, k)),
    );
  const commands = alternatives.format(withEvents.flatMap((p) => (p.commandKind ? [`${p.id} ${p.commandKind}`] : [])));
  plugin.addEventListener("change", fillKinds);
  fillKinds();
  const output = el("div", { class: "result", role: "status", "aria-live": "polite" });
  const form = el(
    "form",
    { id: "test-event" },
    field("Plugin", plugin),
    field("Event", kind),
    ...(commands
      ? [field(`Command name (${commands})`, el("input", { name: "name", maxlength: "32", autocomplete: "off" }))]
      : []),
    field("Text", el("input", { name: "text", maxlength: "2000", autocomplete: "off" })),
    el("button", { type: "submit" }, "Send"),
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const values = new FormData(form);
    const body = {
      kind: kind.value,
      ...(values.get("name") ? { name: values.get("name") } : {}),
      ...(values.get("text") ? { text: values.get("text") } : {}),
    };
    clear(output).append("Sending…");
    output.className = "result";
    try {
      const answer = await api(
        "POST",
        `/projects/${encodeURIComponent(slug)}/plugins/${encodeURIComponent(plugin.value)}/test-events`,
        body,
      );
      clear(output).append(el("p", {}, answer.summary));
      if (answer.pluginAnswer?.inlineReply !== undefined)
        output.append(el("p", {}, `Inline reply: ${JSON.stringify(answer.pluginAnswer.inlineReply)}`));
      const heading = providerCallsHeading(
        answer.outcome?.result,
        answer.calls.length,
        answer.pluginAnswer?.inlineReply !== undefined,
      );
      if (heading) output.append(el("p", {}, heading));
      if (answer.calls.length)
        output.append(el("pre", {}, answer.calls.map((/** @type {unknown} */ c) => JSON.stringify(c)).join("\n")));
    } catch (error) {
      output.className = "result error";
      clear(output).append(errorText(error));
    }
  });
  return appendTo(section, form, output);
}

// ---- a run -----------------------------------------------------------------

/** @param {string} slug @param {string} runId */
async function showRun(slug, runId) {
  const generation = viewGeneration;
  const heading = el("h2", { tabindex: "-1" }, "Workflow run");
  const summary = el("p", { class: "meta" });
  const timeline = el("section", { "aria-labelledby": "timeline-heading" });
  const outcome = el("section", { "aria-labelledby": "outcome-heading" });
  const errors = el("section", { "aria-labelledby": "errors-heading", id: "step-errors", hidden: "" });
  const controls = el("section", { "aria-labelledby": "controls-heading", id: "run-controls" });
  const family = el("section", { "aria-labelledby": "children-heading", id: "run-children" });
  const stream = el("section", { "aria-labelledby": "stream-heading", id: "run-stream" });
  const events = el("pre", { id: "raw-events", tabindex: "0" });
  const live = el("p", { role: "status", class: "meta" });
  const reruns = el("p", { class: "meta", id: "reruns" });
  /** "Rerun from here" on a step of the timeline: a new run that keeps the steps before it. @param {string} step */
  const rerunFrom = async (step) => {
    try {
      const started = await api(
        "POST",
        `/projects/${encodeURIComponent(slug)}/workflows/${encodeURIComponent(runId)}/rerun`,
        { fromStep: step },
      );
      announce(`A rerun from step ${step} started.`);
      location.hash = hrefFor(slug, started.runId);
    } catch (error) {
      live.textContent = `Could not rerun from ${step}: ${errorText(error)}`;
    }
  };
  clear(main).append(
    el("p", {}, el("a", { href: hrefFor(slug) }, `← Project ${slug}`)),
    heading,
    summary,
    reruns,
    live,
    controls,
    timeline,
    outcome,
    errors,
    family,
    stream,
    el("details", { open: "" }, el("summary", {}, "Raw events"), events),
  );
  heading.focus();
  void followStream({
    read: (from) =>
      api("GET", `/projects/${encodeURIComponent(slug)}/workflows/${encodeURIComponent(runId)}/stream?from=${from}`),
    show: renderStreamSection(stream),
    current: () => generation === viewGeneration,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  }).catch((/** @type {unknown} */ error) => {
    if (generation === viewGeneration) stream.append(el("p", { class: "meta" }, `Stream: ${errorText(error)}`));
  });
  let first = true;
  /** @type {string | undefined} */
  let controlsShown;
  const refresh = async () => {
    let view;
    try {
      view = await api("GET", `/projects/${encodeURIComponent(slug)}/workflows/${encodeURIComponent(runId)}`);
    } catch (error) {
      if (generation !== viewGeneration) return;
      live.textContent = `Could not load the run: ${errorText(error)}`;
      if (!(error instanceof ApiError && error.status < 500)) liveTimer = setTimeout(refresh, LIVE_INTERVAL_MS * 3);
      return;
    }
    if (generation !== viewGeneration) return;
    heading.textContent = `Workflow run: ${view.name}`;
    // A running run that waits for an event says so, as `platform workflow list` does.
    const shown = view.status === "running" && view.waitingFor ? "waiting" : view.status;
    clear(summary).append(
      `${view.id} · started ${formatTime(view.createdAt)}${view.version ? ` by version ${view.version}` : ""} · `,
      el("span", { class: `badge status-${view.status}` }, shown),
      ...(view.step ? [` · at step ${view.step}`] : []),
      ...(view.paused ? [` · paused: ${view.paused.reason}`] : []),
      ...(view.rerunOf
        ? [
            " · rerun of ",
            el("a", { href: hrefFor(slug, view.rerunOf.runId), id: "rerun-of" }, shortRunId(view.rerunOf.runId)),
            view.rerunOf.fromStep ? ` from step ${view.rerunOf.fromStep}` : "",
          ]
        : []),
    );
    if (view.parentRunId)
      summary.append(
        " · child of ",
        el("a", { href: hrefFor(slug, view.parentRunId), id: "parent-run" }, shortRunId(view.parentRunId)),
      );
    if (first) void showReruns(slug, view.id, reruns);
    renderTimeline(timeline, view, LIVE_STATUSES.includes(view.status) ? undefined : rerunFrom);
    renderOutcome(outcome, view);
    renderStepErrors(errors, view);
    renderChildren(family, slug, view);
    if (runControlsKey(view) !== controlsShown) {
      controlsShown = runControlsKey(view);
      renderRunControls(controls, slug, view, {
        api,
        errorText,
        announce,
        runHref: (id) => hrefFor(slug, id),
        // After an action, show its effect now instead of at the next tick.
        refresh: () => {
          clearTimeout(liveTimer);
          void refresh();
        },
      });
    }
    events.textContent = view.events.map((/** @type {unknown} */ e) => JSON.stringify(e)).join("\n");
    if (LIVE_STATUSES.includes(view.status)) {
      live.textContent = "Live: updating every second.";
      liveTimer = setTimeout(refresh, LIVE_INTERVAL_MS);
    } else {
      live.textContent = "";
      if (!first) announce(`The run ${view.status}.`);
    }
    first = false;
  };
  await refresh();
}

/**
 * Links to the runs `workflow.rerun` made of this one (the other direction: its `rerunOf`).
 * @param {string} slug @param {string} runId @param {HTMLElement} into
 */
async function showReruns(slug, runId, into) {
  try {
    const page = await api(
      "GET",
      `/projects/${encodeURIComponent(slug)}/workflows?${new URLSearchParams({ rerunOf: runId, limit: "20" })}`,
    );
    if (!page.runs.length) return;
    clear(into).append(
      "Reruns of this run: ",
      ...page.runs.flatMap((/** @type {any} */ run, /** @type {number} */ i) => [
        i ? ", " : "",
        el("a", { href: hrefFor(slug, run.id), "data-rerun": run.id }, shortRunId(run.id)),
        ` (${run.status})`,
      ]),
    );
  } catch {
    // The links are a convenience: the run's own view does not depend on them.
  }
}

/** @param {HTMLElement} section @param {any} view */
function renderOutcome(section, view) {
  clear(section).append(el("h3", { id: "outcome-heading" }, "Result"));
  if (view.status === "completed")
    section.append(el("pre", { id: "run-result", class: "outcome-completed" }, JSON.stringify(view.result, null, 2)));
  else if (view.status === "failed")
    section.append(el("p", { id: "run-error", class: "error" }, `Failed: ${view.error}`));
  else if (view.status === "cancelled")
    section.append(el("p", { id: "run-cancelled" }, `Cancelled: ${view.cancelReason ?? "no reason given"}`));
  else if (view.status === "paused")
    section.append(
      el("p", { id: "run-paused" }, `Paused: ${view.paused?.reason ?? "no reason given"}. Resume it to go on.`),
    );
  else if (view.queued)
    section.append(
      el(
        "p",
        { id: "run-queued" },
        `Not started yet: queued under key ${JSON.stringify(view.queued.key)}, waiting for ${view.queued.waitsFor}` +
          (view.queued.ahead === undefined ? "" : ` (${view.queued.ahead} queued ahead of it)`) +
          (view.queued.notBefore === undefined ? "." : `, not before ${formatTime(view.queued.notBefore)}.`),
      ),
    );
  else if (view.waitingForChildren)
    section.append(
      el(
        "p",
        {},
        `Not finished yet: waiting for its children (${view.waitingForChildren.finished} of ${view.waitingForChildren.total} ended).`,
      ),
    );
  else if (view.waitingFor) section.append(el("p", {}, `Not finished yet: waiting for "${view.waitingFor.name}".`));
  else if (view.wakeAt !== undefined)
    section.append(el("p", {}, `Not finished yet: sleeping until ${formatTime(view.wakeAt)}.`));
  else section.append(el("p", {}, "Not finished yet."));
}

/**
 * The child runs a run's steps started, in the order asked for, each linking to its own run.
 * @param {HTMLElement} section @param {string} slug @param {any} view
 */
function renderChildren(section, slug, view) {
  clear(section);
  /** @type {{ runId: string, workflow: string, status: string, result?: unknown, error?: string }[]} */
  const children = view.children ?? [];
  if (children.length === 0) return;
  section.append(
    el("h3", { id: "children-heading" }, `Children (${children.length})`),
    table(
      "Child runs",
      ["Run", "Workflow", "Status", "Outcome"],
      children.map((child) => [
        el("a", { href: hrefFor(slug, child.runId), title: child.runId }, shortRunId(child.runId)),
        child.workflow,
        el("span", { class: `badge status-${child.status}` }, child.status),
        child.status === "completed" ? JSON.stringify(child.result ?? null) : (child.error ?? ""),
      ]),
    ),
  );
}

/**
 * @param {string} caption @param {string[]} headers @param {(string | Node)[][]} rows
 */
function table(caption, headers, rows) {
  return el(
    "table",
    {},
    el("caption", { class: "visually-hidden" }, caption),
    el("thead", {}, el("tr", {}, ...headers.map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, ...rows.map((cells) => el("tr", {}, ...cells.map((c) => el("td", {}, c))))),
  );
}

await takeTokenFromFragment();
await start();
