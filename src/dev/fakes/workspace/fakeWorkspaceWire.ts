/** How the fake workspace reads and answers Web API calls. */

/** A JSON field of a Web API call: a string in a form body, a value in a JSON one. */
export function jsonParam(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : value;
}

/** Web API answer: Slack reports almost every failure as HTTP 200 with `ok:false`. */
export function apiJson(body: Record<string, unknown>, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, { status, headers });
}

/** Reads a Web API body: form or JSON, as Slack accepts both. */
export async function readParams(request: Request): Promise<Record<string, unknown> | null> {
  const type = request.headers.get("content-type") ?? "";
  const text = await request.text();
  if (type.includes("application/json")) {
    try {
      const value = JSON.parse(text);
      return typeof value === "object" && value && !Array.isArray(value) ? value : null;
    } catch {
      return null;
    }
  }
  return Object.fromEntries(new URLSearchParams(text));
}

/** A `/__fake/trigger` the fake refuses, with why. */
export function refusedTrigger(error: string): Response {
  return Response.json({ error }, { status: 400 });
}
