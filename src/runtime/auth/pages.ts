import { escapeHtml } from "../../core/web/html.ts";

/**
 * The few HTML pages sign-in serves itself. They load nothing, run no script,
 * cannot be framed (`X-Frame-Options: DENY`, `frame-ancestors 'none'`), only
 * submit forms to their own origin, and are never cached.
 */

const CSP =
  "default-src 'none'; style-src 'unsafe-inline'; img-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** Headers every sign-in response carries (pages and redirects). */
export function securityHeaders(headers: Headers = new Headers()): Headers {
  headers.set("Cache-Control", "no-store");
  headers.set("X-Frame-Options", "DENY");
  headers.set("Content-Security-Policy", CSP);
  headers.set("X-Content-Type-Options", "nosniff");
  // `same-origin`, not `no-referrer`: the latter would make the browser send `Origin: null` on the form's POST.
  if (!headers.has("Referrer-Policy")) headers.set("Referrer-Policy", "same-origin");
  return headers;
}

export function htmlPage(status: number, title: string, body: string, headers: Headers = new Headers()): Response {
  headers.set("Content-Type", "text/html; charset=utf-8");
  const html = `<!doctype html>
<html lang="en">
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
  label { display: block; margin: .75rem 0; } input { display: block; width: 100%; box-sizing: border-box; font: inherit; padding: .4rem; }
  button { font: inherit; padding: .4rem 1rem; margin-right: .5rem; } .note { color: #555; font-size: .9rem; }
</style>
<h1>${escapeHtml(title)}</h1>
${body}
</html>`;
  return new Response(html, { status, headers: securityHeaders(headers) });
}

export interface SignInFormInput {
  action: string;
  slug: string;
  csrfToken: string;
  redirect: string;
  domains: readonly string[] | null;
}

/** The local dummy login: an email, an optional name, Login and Cancel. */
export function signInFormPage(input: SignInFormInput, headers: Headers): Response {
  const rule = input.domains
    ? `Only addresses at ${input.domains.map((d) => `<code>${escapeHtml(d)}</code>`).join(", ")} may sign in.`
    : "Any address may sign in.";
  return htmlPage(
    200,
    `Sign in to ${input.slug}`,
    `<p class="note">Local development: this form stands in for the identity provider. ${rule}</p>
<form method="post" action="${escapeHtml(input.action)}">
  <input type="hidden" name="csrf" value="${escapeHtml(input.csrfToken)}">
  <input type="hidden" name="redirect" value="${escapeHtml(input.redirect)}">
  <label>Email <input type="email" name="email" required autocomplete="email" autofocus></label>
  <label>Name (optional) <input type="text" name="name" autocomplete="name" maxlength="200"></label>
  <button type="submit" name="action" value="login">Login</button>
  <button type="submit" name="action" value="cancel" formnovalidate>Cancel</button>
</form>`,
    headers,
  );
}

export interface MessagePageInput {
  status: number;
  title: string;
  message: string;
  /** Links shown under the message: [label, href]. */
  links?: [string, string][];
}

export function messagePage(input: MessagePageInput, headers: Headers = new Headers()): Response {
  const links = (input.links ?? [])
    .map(([label, href]) => `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`)
    .join(" · ");
  return htmlPage(
    input.status,
    input.title,
    `<p>${escapeHtml(input.message)}</p>${links ? `\n<p>${links}</p>` : ""}`,
    headers,
  );
}

/** A cross-site GET /api/auth/signout: nothing happens until the user confirms with a same-origin POST. */
export function signOutConfirmPage(action: string, home: string): Response {
  return signOutFormPage(
    403,
    "Sign out?",
    "This sign-out link came from another site, so nothing was changed. To sign out, confirm:",
    action,
    home,
  );
}

/** A sign-out the platform could not record: still signed in (the cookie kept), with a button to try again. */
export function signOutRetryPage(action: string, home: string): Response {
  return signOutFormPage(
    503,
    "Sign-out did not finish",
    "The platform could not end your session, so you are still signed in. Try again in a moment:",
    action,
    home,
  );
}

function signOutFormPage(status: number, title: string, message: string, action: string, home: string): Response {
  return htmlPage(
    status,
    title,
    `<p>${escapeHtml(message)}</p>
<form method="post" action="${escapeHtml(action)}"><button type="submit">Sign out</button></form>
<p><a href="${escapeHtml(home)}">Back to the app</a></p>`,
  );
}
