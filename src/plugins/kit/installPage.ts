import { escapeHtml } from "../../core/web/html.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../core/web/pageIcon.ts";

/** The pages a person sees during a plugin install. Everything interpolated is escaped. */
const HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; frame-ancestors 'none'`,
};

export function installPage(
  status: number,
  title: string,
  message: string,
  extraHeaders: Record<string, string> = {},
): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title>${PAGE_ICON}
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>`;
  return new Response(html, { status, headers: { ...HEADERS, ...extraHeaders } });
}
