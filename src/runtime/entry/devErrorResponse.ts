import { errorResponse, PlatformError } from "../../core/errors.ts";
import { escapeHtml } from "../../core/web/html.ts";
import { isNavigation } from "../../core/web/navigation.ts";
import type { PlatformEnv } from "./platformEnv.ts";
import { PAGE_ICON, PAGE_ICON_CSP } from "../../core/web/pageIcon.ts";

/**
 * Under `platform dev` only, the 500 for an unhandled error in user code says
 * what went wrong: its message and its stack, pointed at the
 * project's sources by `platform dev` itself through the `PLATFORM_DEV_STACK`
 * service binding (a Node function that maps bundle positions with the dev
 * build's source map). A browser navigation gets an HTML page, anything else
 * the usual JSON error with `details: { message, stack }`.
 *
 * Both `PLATFORM_LOCAL === "1"` and the binding are required: a deployed
 * project never gets the binding, so production answers keep hiding the error.
 */

/** Stacks are short; a longer one is cut before it is posted for mapping. */
const STACK_LIMIT = 64 * 1024;

/** The dev-only answer to `error`, or null when this is not `platform dev`. */
export async function devErrorResponse(error: unknown, request: Request, env: PlatformEnv): Promise<Response | null> {
  const mapper = env.PLATFORM_DEV_STACK as Fetcher | undefined;
  if (env.PLATFORM_LOCAL !== "1" || typeof mapper?.fetch !== "function") return null;
  const message = error instanceof Error ? error.message : String(error);
  const raw = (error instanceof Error && error.stack ? error.stack : String(error)).slice(0, STACK_LIMIT);
  const stack = await mappedStack(mapper, raw);
  if (isNavigation(request)) return errorPage(request, message, stack);
  return errorResponse(new PlatformError("internal", "Internal error", { message, stack }), {
    "Cache-Control": "no-store",
    Vary: "Accept",
  });
}

/** The stack as `platform dev` maps it, or as it was when that fails. */
async function mappedStack(mapper: Fetcher, stack: string): Promise<string> {
  try {
    const answer = await mapper.fetch("http://dev-stack/", { method: "POST", body: stack });
    return answer.ok ? await answer.text() : stack;
  } catch {
    return stack;
  }
}

function errorPage(request: Request, message: string, stack: string): Response {
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>500 Internal error</title>${PAGE_ICON}
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}pre{background:#f6f6f6;padding:1rem;overflow:auto}</style>
</head>
<body>
<h1>500: ${escapeHtml(message)}</h1>
<p>An unhandled error in the project's code (shown by <code>platform dev</code> only; deployed, the answer is a plain 500).</p>
<pre>${escapeHtml(stack)}</pre>
</body>
</html>
`;
  // Its own headers, not the sign-in pages': the entry must not pull auth code into projects that never sign in.
  const headers = new Headers({
    "Content-Type": "text/html; charset=utf-8",
    Vary: "Accept",
    "Cache-Control": "no-store",
    "Content-Security-Policy": `default-src 'none'; style-src 'unsafe-inline'; ${PAGE_ICON_CSP}; frame-ancestors 'none'; base-uri 'none'`,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
  });
  return new Response(request.method === "HEAD" ? null : html, { status: 500, headers });
}
