import { randomBase64url } from "../../core/crypto/encoding.ts";
import { escapeHtml } from "../../core/web/html.ts";
import { SECURITY_HEADERS } from "./pages.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../core/web/pageIcon.ts";

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}button{font:inherit;margin:.8rem .6rem 0 0;padding:.4rem 1rem}code{font-size:1.2rem}";

function page(title: string, body: string, extraHeaders: Record<string, string>, setCookies: string[]): Response {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>${PAGE_ICON}
<style>${STYLE}</style></head>
<body><h1>${escapeHtml(title)}</h1>${body}</body>
</html>
`;
  const headers = new Headers({ ...SECURITY_HEADERS, ...extraHeaders, "Content-Type": "text/html; charset=utf-8" });
  for (const cookie of setCookies) headers.append("Set-Cookie", cookie);
  return new Response(html, { status: 200, headers });
}

/**
 * "Allow the CLI on <host> to act as EMAIL?": the form POSTs back to this
 * worker's `/cli/approve` only (CSP form-action), with the flow's form token.
 */
export function cliApprovalPage(input: {
  action: string;
  csrf: string;
  email: string;
  clientHost: string;
  platformHost: string;
  verification: string;
  setCookies: string[];
}): Response {
  const who = input.clientHost ? `the CLI on ${input.clientHost}` : "the CLI";
  return page(
    "Allow the CLI?",
    `<p>Allow ${escapeHtml(who)} to act as <strong>${escapeHtml(input.email)}</strong> on ${escapeHtml(input.platformHost)}?</p>
<p>Your terminal shows the code <code>${escapeHtml(input.verification)}</code>. If it does not, or you did not run <code>platform login</code>, deny.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
    {
      // Its form's POST names this origin (no-referrer would make it "null"); the URL's code is spent already.
      "Referrer-Policy": "same-origin",
      "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; form-action ${input.action}; frame-ancestors 'none'; base-uri 'none'`,
    },
    input.setCookies,
  );
}

/** The answer recorded: the person goes back to the terminal. */
export function cliAnsweredPage(allowed: boolean, email: string, setCookies: string[]): Response {
  return allowed
    ? page(
        "Signed in",
        `<p>The CLI is signed in as <strong>${escapeHtml(email)}</strong>. You can close this tab and return to your terminal.</p>`,
        {},
        setCookies,
      )
    : page("Refused", "<p>The CLI was not signed in. You can close this tab.</p>", {}, setCookies);
}

export function formToken(): string {
  return randomBase64url(32);
}
