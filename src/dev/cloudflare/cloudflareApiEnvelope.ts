/**
 * Cloudflare API v4's response envelope (developers.cloudflare.com/fundamentals/api/): every answer is
 * `{ success, errors: [{ code, message }], messages, result }`, refusals with `result: null`.
 */
export interface CloudflareRefusal {
  status: number;
  code: number;
  message: string;
}

export function cloudflareSuccess(result: unknown): Response {
  return Response.json({ success: true, errors: [], messages: [], result });
}

export function cloudflareRefusal({ status, code, message }: CloudflareRefusal): Response {
  return Response.json({ success: false, errors: [{ code, message }], messages: [], result: null }, { status });
}
