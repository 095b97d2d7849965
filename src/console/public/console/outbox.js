// @ts-check
// The Outbox section of a project (under `platform dev`): the emails the
// project sent, as the local fake provider kept them. An email's html is
// shown only inside an iframe with `sandbox=""` (no scripts, no forms, no
// same origin, so it cannot reach this page or its token) through `srcdoc`,
// with a Content-Security-Policy that also stops it fetching anything but
// images; the subject, addresses and times are text.
import { appendTo, clear, el, formatTime } from "./dom.js";

/** Prepended to the email's html: nothing runs or loads but images and inline styles. */
const EMAIL_CSP =
  "default-src 'none'; img-src data: http: https:; style-src 'unsafe-inline'; font-src data: http: https:; form-action 'none'";

/**
 * @param {string} html
 * @returns {HTMLIFrameElement}
 */
export function sandboxedEmailFrame(html) {
  const frame = el("iframe", {
    class: "email-frame",
    title: "Email content",
    sandbox: "",
    referrerpolicy: "no-referrer",
  });
  frame.srcdoc = `<meta http-equiv="Content-Security-Policy" content="${EMAIL_CSP}">${html}`;
  return frame;
}

/**
 * @param {string} slug
 * @param {{ api: (method: string, path: string) => Promise<any>, errorText: (error: unknown) => string }} io
 */
export function outboxSection(slug, { api, errorText }) {
  const section = el(
    "section",
    { id: "outbox", "aria-labelledby": "outbox-heading" },
    el("h3", { id: "outbox-heading" }, "Outbox"),
  );
  const list = el("div", {}, el("p", { role: "status" }, "Loading…"));
  const viewer = el("div", { id: "outbox-email", "aria-live": "polite" });
  const base = `/projects/${encodeURIComponent(slug)}/outbox`;

  /** @param {string} id */
  async function show(id) {
    clear(viewer).append(el("p", { role: "status" }, "Loading…"));
    try {
      const { email } = await api("GET", `${base}/${encodeURIComponent(id)}`);
      clear(viewer).append(
        el("h4", {}, email.subject),
        el(
          "dl",
          { class: "email-headers" },
          el("dt", {}, "From"),
          el("dd", {}, email.from),
          el("dt", {}, "To"),
          el("dd", {}, email.to.join(", ")),
          el("dt", {}, "Sent"),
          el("dd", {}, formatTime(email.sentAt)),
          el("dt", {}, "Id"),
          el("dd", {}, email.id),
        ),
        sandboxedEmailFrame(email.html),
      );
    } catch (error) {
      clear(viewer).append(el("p", { class: "error", role: "alert" }, errorText(error)));
    }
  }

  async function load() {
    try {
      const { emails } = await api("GET", base);
      if (!emails.length) {
        clear(list).append(el("p", {}, "No email sent yet. What the project sends with email.send() appears here."));
        return;
      }
      clear(list).append(
        el(
          "table",
          {},
          el("caption", { class: "visually-hidden" }, "Outbox"),
          el("thead", {}, el("tr", {}, ...["Sent", "To", "Subject", ""].map((h) => el("th", { scope: "col" }, h)))),
          el(
            "tbody",
            {},
            ...emails.map((/** @type {any} */ e) =>
              el(
                "tr",
                {},
                el("td", {}, formatTime(e.sentAt)),
                el("td", {}, e.to.join(", ")),
                el("td", {}, e.subject),
                el("td", {}, el("button", { type: "button", onclick: () => void show(e.id) }, "View")),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      // Only shown when the API names its outbox route (app.js): a failure here is a real one.
      clear(list).append(el("p", { class: "error" }, errorText(error)));
    }
  }

  void load();
  return appendTo(
    section,
    el("p", { class: "meta" }, "Under platform dev, email is kept here instead of being delivered."),
    list,
    viewer,
  );
}
