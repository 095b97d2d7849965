import { randomBase64url } from "../../core/crypto/encoding.ts";
import { escapeHtml } from "../../core/web/html.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../core/web/pageIcon.ts";

/**
 * Every answer of the login worker that a person sees: an error page, or a
 * redirect. Pages are plain HTML with everything interpolated escaped; none
 * can be framed, cached or leak the URL (which may carry a code) as a Referer.
 */

/** Headers on every login-worker response. */
export const SECURITY_HEADERS: Record<string, string> = {
  "X-Frame-Options": "DENY",
  "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
};

/** A refusal that ends the sign-in: rendered as a page with `status`; nothing was minted. */
export class LoginError extends Error {
  readonly status: number;
  readonly title: string;
  /** Where the person can go instead (a URL derived from the project registry, never from the request). */
  link: { href: string; text: string } | undefined;

  constructor(status: number, title: string, message: string, link?: { href: string; text: string }) {
    super(message);
    this.name = "LoginError";
    this.status = status;
    this.title = title;
    this.link = link;
  }
}

export function errorPage(error: LoginError, extraHeaders: HeadersInit = {}): Response {
  const link = error.link ? `<p><a href="${escapeHtml(error.link.href)}">${escapeHtml(error.link.text)}</a></p>` : "";
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(error.title)}</title>${PAGE_ICON}
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style></head>
<body><h1>${escapeHtml(error.title)}</h1><p>${escapeHtml(error.message)}</p>${link}</body>
</html>
`;
  const headers = new Headers({ ...SECURITY_HEADERS, "Content-Type": "text/html; charset=utf-8" });
  for (const [name, value] of new Headers(extraHeaders)) headers.append(name, value);
  return new Response(html, { status: error.status, headers });
}

/** A top-level 302 (never 307: nothing is re-posted), with the security headers and any cookies. */
export function redirect(location: string, setCookies: string[] = []): Response {
  const headers = new Headers({ ...SECURITY_HEADERS, Location: location });
  for (const cookie of setCookies) headers.append("Set-Cookie", cookie);
  return new Response(null, { status: 302, headers });
}

/**
 * Hands the callback token to the project: a page whose form POSTs `token`
 * to the project's callback, submitted by a one-line script (allowed by its
 * CSP nonce) or, without script, by its button. The token is in the body of
 * this page and of the POST only, never in a URL, so a page that shares the
 * project's origin (another private project) cannot read it from a popup's
 * location or history. The CSP allows that one form action and nothing else;
 * `no-referrer` keeps this page's URL (the provider's code) out of the POST.
 */
export function callbackFormPage(action: string, token: string, slug: string, setCookies: string[]): Response {
  const nonce = randomBase64url(16);
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Signing in to ${escapeHtml(slug)}</title>${PAGE_ICON}
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}</style></head>
<body><form id="callback" method="post" action="${escapeHtml(action)}">
<input type="hidden" name="token" value="${escapeHtml(token)}">
<p>Signing you in to ${escapeHtml(slug)}…</p>
<button type="submit">Continue</button>
</form>
<script nonce="${nonce}">document.getElementById("callback").submit();</script></body>
</html>
`;
  const headers = new Headers({
    ...SECURITY_HEADERS,
    "Content-Security-Policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; form-action ${action}; frame-ancestors 'none'; base-uri 'none'`,
    "Content-Type": "text/html; charset=utf-8",
  });
  for (const cookie of setCookies) headers.append("Set-Cookie", cookie);
  return new Response(html, { status: 200, headers });
}
