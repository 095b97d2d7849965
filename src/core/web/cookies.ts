/**
 * Reading the `Cookie` header and writing `Set-Cookie` values. Platform
 * cookies are always HttpOnly and host-only (never a `Domain`).
 */

/**
 * Every value the request carries for `name`, in header order (a browser sends
 * the cookie with the longest matching path first). Several can arrive when a
 * script elsewhere on the origin planted one on a deeper path.
 */
export function cookieValues(request: Request, name: string): string[] {
  const header = request.headers.get("cookie");
  if (!header) return [];
  const values: string[] = [];
  for (const pair of header.split(";")) {
    const at = pair.indexOf("=");
    if (at === -1) continue;
    if (pair.slice(0, at).trim() === name) values.push(pair.slice(at + 1).trim());
  }
  return values;
}

/** The first value of `name`, or `null`. */
export function cookieValue(request: Request, name: string): string | null {
  return cookieValues(request, name)[0] ?? null;
}

export interface CookieAttributes {
  path: string;
  /** Seconds; 0 removes the cookie. */
  maxAge: number;
  sameSite: "Lax" | "Strict" | "None";
  secure: boolean;
}

/** `name=value; Path; Max-Age; HttpOnly; SameSite[; Secure]`. */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  const parts = [
    `${name}=${value}`,
    `Path=${attributes.path}`,
    `Max-Age=${attributes.maxAge}`,
    "HttpOnly",
    `SameSite=${attributes.sameSite}`,
  ];
  if (attributes.secure) parts.push("Secure");
  return parts.join("; ");
}
