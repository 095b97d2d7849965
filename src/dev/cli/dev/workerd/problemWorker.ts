import { escapeHtml } from "../../../../core/web/html.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../../../core/web/pageIcon.ts";

/**
 * What `platform dev` serves in the project's place when its first build or
 * first load failed: every request gets 503 saying what is wrong (the build
 * error with its code frame, or the top-level throw with its location), an
 * HTML page for a browser's navigation and the platform's JSON error
 * otherwise, while the console and the API keep running and the watcher
 * waits for the fix. Never deployed: a deployment without a working build
 * never happens.
 */
export function problemWorkerScript(problem: string): string {
  const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>The project does not run</title>${PAGE_ICON}
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}pre{background:#f6f6f6;padding:1rem;overflow:auto}</style>
</head>
<body>
<h1>The project does not run</h1>
<p><code>platform dev</code> could not start it; it rebuilds when you save a fix. (Shown by <code>platform dev</code> only.)</p>
<pre>${escapeHtml(problem)}</pre>
</body>
</html>
`;
  const json = JSON.stringify({ error: { code: "build_failed", message: problem } });
  return `const PAGE = ${JSON.stringify(page)};
const JSON_BODY = ${JSON.stringify(json)};
const HEADERS = { "Cache-Control": "no-store", Vary: "Accept", "X-Content-Type-Options": "nosniff" };
export default {
  fetch(request) {
    const accept = request.headers.get("accept") ?? "";
    const navigation = (request.method === "GET" || request.method === "HEAD") && /(^|,)\\s*text\\/html\\s*(;|,|$)/i.test(accept);
    if (navigation)
      return new Response(request.method === "HEAD" ? null : PAGE, {
        status: 503,
        headers: {
          ...HEADERS,
          "Content-Type": "text/html; charset=utf-8",
          "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; frame-ancestors 'none'",
        },
      });
    return new Response(JSON_BODY, { status: 503, headers: { ...HEADERS, "Content-Type": "application/json" } });
  },
};
`;
}
