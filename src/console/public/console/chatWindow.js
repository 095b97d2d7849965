// @ts-check
// The chat window (under `platform dev`): the local fake chat server's and
// fake workspace's channels as a person in them sees them, messages with
// their buttons and selects, the modals and views open for that person, and a
// box to type a message or a /command. A click, a choice, a submit or a typed
// line is a test event (chatActions.js): the fake provider sends the real
// signed interaction through the plugin to the project, and the window shows
// what came of it. Every value from the chat reaches the page as text; a link
// button opens only http(s) addresses.
import { appendTo, clear, el, field } from "./dom.js";
import { chooseBody, clickBody, sameChat, submitBody, typedBody } from "./chatActions.js";

/** The plugins whose fake has channels to show. */
const CHAT_PLUGINS = ["chatserver", "workspace"];
const REFRESH_MS = 2000;

/**
 * @typedef {import("./chatActions.js").ChatWindowView} ChatWindowView
 * @typedef {import("./chatActions.js").ChatMessage} ChatMessage
 * @typedef {import("./chatActions.js").ChatForm} ChatForm
 * @typedef {{
 *   api: (method: string, path: string, body?: unknown) => Promise<any>,
 *   errorText: (error: unknown) => string,
 *   announce: (message: string) => void,
 *   isCurrent: () => boolean,
 * }} ChatWindowContext
 */

/**
 * @param {string} slug
 * @param {{ connections: any[], resources: { plugin: string }[] }} plugins
 * @param {{ id: string, title: string }[]} catalog
 * @param {ChatWindowContext} context
 */
export function chatWindowSection(slug, plugins, catalog, context) {
  const section = el(
    "section",
    { id: "chat-window", "aria-labelledby": "chat-window-heading" },
    el("h3", { id: "chat-window-heading" }, "Chat window"),
  );
  const bots = catalog.filter((p) => CHAT_PLUGINS.includes(p.id) && plugins.resources.some((r) => r.plugin === p.id));
  if (!bots.length)
    return appendTo(
      section,
      el("p", {}, `Install a bot to chat with it here: platform plugin install ${CHAT_PLUGINS.join(" or ")}.`),
    );
  section.append(
    el(
      "p",
      { class: "meta" },
      "The local fake providers' channels, as a person in them sees them. A click, a choice, a form or a typed line goes to the plugin as the provider's real signed interaction.",
    ),
  );
  for (const bot of bots)
    section.append(
      botPane(
        slug,
        bot,
        plugins.connections.find((c) => c.plugin === bot.id),
        context,
      ),
    );
  return section;
}

/**
 * One bot's chat: its channels, the open forms, the typing box and what the last action came to.
 * @param {string} slug @param {{ id: string, title: string }} bot @param {any} connection @param {ChatWindowContext} context
 */
function botPane(slug, bot, connection, context) {
  const base = `/projects/${encodeURIComponent(slug)}/plugins/${encodeURIComponent(bot.id)}`;
  const heading = el("h4", { id: `chat-${bot.id}-heading` }, bot.title);
  const channelSelect = /** @type {HTMLSelectElement} */ (el("select", { name: "channel" }));
  const log = el("ol", { class: "chat-messages", role: "log", "aria-label": "Messages" });
  const forms = el("div", { class: "chat-forms" });
  const status = el("p", { class: "result", role: "status", "aria-live": "polite" });
  const input = /** @type {HTMLInputElement} */ (
    el("input", {
      name: "line",
      autocomplete: "off",
      maxlength: "2000",
      placeholder: bot.id === "chatserver" ? "Message, or /command text" : "Message",
    })
  );
  const composer = el(
    "form",
    { class: "chat-composer" },
    field(bot.id === "chatserver" ? "Say something or run a /command" : "Say something", input),
    el("button", { type: "submit" }, "Send"),
  );
  const pane = el(
    "section",
    { class: "chat-pane", "aria-labelledby": heading.id, "data-plugin": bot.id },
    heading,
    healthNotice(slug, bot.id, connection, context),
    field("Channel", channelSelect),
    log,
    forms,
    composer,
    status,
  );

  /** @type {ChatWindowView | null} */
  let shown = null;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;

  /** Sends a test event, says what came of it, and shows the chat after it. @param {Record<string, unknown>} body @param {string} doing */
  const act = async (body, doing) => {
    status.className = "result";
    status.textContent = `${doing}…`;
    try {
      const answer = await context.api("POST", `${base}/test-events`, body);
      status.textContent = answer.summary;
      context.announce(answer.summary);
    } catch (error) {
      status.className = "result error";
      status.textContent = context.errorText(error);
    }
    await load();
  };

  const channel = () => channelSelect.value;

  /** @param {ChatMessage} message */
  const messageItem = (message) => {
    const item = el(
      "li",
      {
        class: `chat-message${message.bot ? " from-bot" : ""}${message.ephemeral ? " ephemeral" : ""}`,
        "data-message-id": message.id,
      },
      el(
        "p",
        { class: "chat-author" },
        message.author,
        message.bot ? el("span", { class: "badge" }, "bot") : "",
        message.edited ? el("span", { class: "meta" }, " (edited)") : "",
      ),
    );
    if (message.command) item.append(el("p", { class: "meta" }, message.command));
    if (message.pending) item.append(el("p", { class: "meta" }, `${message.author} is thinking…`));
    // A workspace message's text is only the fallback of blocks that show their own.
    const blocksSpeak = message.rows.some((row) => row.kind === "text");
    if (message.text && !blocksSpeak) item.append(el("p", { class: "chat-text" }, message.text));
    for (const row of message.rows) {
      if (row.kind === "text") item.append(el("p", { class: "chat-text" }, row.text));
      else if (row.kind === "buttons")
        item.append(
          el(
            "div",
            { class: "chat-row" },
            ...row.buttons.map((button) => {
              if (button.url)
                return /^https?:\/\//.test(button.url)
                  ? el(
                      "a",
                      {
                        class: "chat-button style-link",
                        href: button.url,
                        target: "_blank",
                        rel: "noopener noreferrer",
                      },
                      button.label,
                    )
                  : el("span", { class: "chat-button style-link" }, button.label);
              const id = button.id ?? "";
              return el(
                "button",
                {
                  type: "button",
                  class: `chat-button style-${button.style}`,
                  ...(button.disabled ? { disabled: "" } : {}),
                  onclick: () => act(clickBody(bot.id, channel(), message.id, id), `Clicking ${button.label}`),
                },
                button.label,
              );
            }),
          ),
        );
      else {
        const { select } = row;
        const control = /** @type {HTMLSelectElement} */ (
          el(
            "select",
            {
              name: select.id,
              ...(select.maxValues > 1 ? { multiple: "" } : {}),
              ...(select.disabled ? { disabled: "" } : {}),
            },
            ...(select.maxValues > 1 ? [] : [el("option", { value: "" }, select.placeholder ?? "Choose…")]),
            ...select.options.map((o) => el("option", { value: o.value }, o.label)),
          )
        );
        const choose = el(
          "button",
          {
            type: "button",
            ...(select.disabled ? { disabled: "" } : {}),
            onclick: () => {
              const values = [...control.selectedOptions].map((o) => o.value).filter(Boolean);
              void act(
                chooseBody(bot.id, channel(), message.id, select.id, values),
                `Choosing ${values.join(", ") || "nothing"}`,
              );
            },
          },
          "Choose",
        );
        item.append(el("div", { class: "chat-row" }, field(select.placeholder ?? "Choose", control), choose));
      }
    }
    if (message.ephemeral) item.append(el("p", { class: "meta" }, "Only you can see this."));
    return item;
  };

  /** An open modal or view as a form. @param {ChatForm} form */
  const formOf = (form) => {
    const titleId = `chat-form-${bot.id}-${form.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
    const controls = form.fields.map((f) => {
      const attributes = {
        name: f.id,
        ...(f.required ? { required: "" } : {}),
        ...(f.placeholder ? { placeholder: f.placeholder } : {}),
      };
      const control =
        f.style === "paragraph"
          ? el("textarea", { ...attributes, rows: "3" }, f.value ?? "")
          : f.style === "select"
            ? el(
                "select",
                attributes,
                el("option", { value: "" }, "Choose…"),
                ...(f.options ?? []).map((o) => el("option", { value: o.value }, o.label)),
              )
            : el("input", { ...attributes, autocomplete: "off", value: f.value ?? "" });
      return field(f.label, /** @type {HTMLInputElement} */ (control));
    });
    const element = /** @type {HTMLFormElement} */ (
      el(
        "form",
        { class: "chat-form", "aria-labelledby": titleId },
        el("h5", { id: titleId }, form.title),
        ...controls,
        el("button", { type: "submit" }, form.submitLabel),
      )
    );
    element.addEventListener("submit", (event) => {
      event.preventDefault();
      const values = new FormData(element);
      const fields = Object.fromEntries(form.fields.map((f) => [f.id, String(values.get(f.id) ?? "")]));
      void act(submitBody(bot.id, form.id, fields), `Submitting ${form.title}`);
    });
    return element;
  };

  /** @param {ChatWindowView} view */
  const render = (view) => {
    heading.textContent = `${bot.title}: ${view.resource.displayName ?? view.resource.externalId}`;
    const chosen = channel();
    clear(channelSelect).append(...view.channels.map((c) => el("option", { value: c.id }, `#${c.name}`)));
    if (view.channels.some((c) => c.id === chosen)) channelSelect.value = chosen;
    const current = view.channels.find((c) => c.id === channel());
    log.setAttribute("aria-label", `Messages in #${current?.name ?? ""}`);
    clear(log).append(
      ...(current?.messages.length
        ? current.messages.map(messageItem)
        : [el("li", { class: "meta" }, "No messages yet.")]),
    );
    clear(forms).append(...view.forms.map(formOf));
  };

  const load = async () => {
    clearTimeout(timer);
    if (!context.isCurrent()) return;
    try {
      const view = /** @type {ChatWindowView} */ (await context.api("GET", `${base}/chat`));
      if (!context.isCurrent()) return;
      if (!sameChat(shown, view)) render(view);
      shown = view;
    } catch (error) {
      if (!context.isCurrent()) return;
      // A deployed platform has no fake providers to show.
      const devOnly = /** @type {{ status?: number }} */ (error).status === 404;
      clear(log).append(
        el(
          "li",
          { class: devOnly ? "meta" : "error" },
          devOnly ? "The chat window exists under platform dev only." : context.errorText(error),
        ),
      );
      if (devOnly) return;
    }
    timer = setTimeout(() => void load(), REFRESH_MS);
  };

  channelSelect.addEventListener("change", () => {
    if (shown) render(shown);
  });
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const typed = typedBody(bot.id, channel(), input.value);
    if ("error" in typed) {
      status.className = "result error";
      status.textContent = typed.error;
      return;
    }
    input.value = "";
    void act(typed.body, typed.body.kind === "command" ? `Running /${typed.body.name}` : "Sending");
  });
  void load();
  return pane;
}

/**
 * A connection that needs reconnecting (the provider refused its token or its refresh) says so, with a button
 * that makes a one-time install link (`POST /oauth/session`).
 * @param {string} slug @param {string} plugin @param {any} connection @param {ChatWindowContext} context
 */
function healthNotice(slug, plugin, connection, context) {
  const notice = el("div", { class: "chat-health" });
  if (!connection || (connection.status !== "needs_reconnect" && connection.status !== "revoked")) return notice;
  const why =
    connection.status === "revoked"
      ? "This connection was revoked at the provider."
      : `This connection needs reconnecting: the provider refused its token (${connection.lastError}).`;
  const output = el("p", { role: "status" });
  const button = /** @type {HTMLButtonElement} */ (
    el(
      "button",
      {
        type: "button",
        onclick: async () => {
          button.disabled = true;
          try {
            const session = await context.api("POST", "/oauth/session", { project: slug, plugin });
            clear(output).append(
              el(
                "a",
                { href: session.installUrl, target: "_blank", rel: "noopener noreferrer" },
                "Open the install link",
              ),
              " (one use, valid 2 minutes).",
            );
          } catch (error) {
            output.textContent = context.errorText(error);
          } finally {
            button.disabled = false;
          }
        },
      },
      "Create an install link",
    )
  );
  return appendTo(notice, el("p", { class: "error" }, why), button, output);
}
