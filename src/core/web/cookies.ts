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

/** A cookie name is an RFC 6265 token: visible ASCII but separators. */
const COOKIE_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A cookie value: visible ASCII but `"`, `,`, `;` and `\` (RFC 6265 cookie-octet). */
const COOKIE_VALUE = /^[\x21\x23-\x2B\x2D-\x3A\x3C-\x5B\x5D-\x7E]*$/;

/**
 * `name=value; Path; Max-Age; HttpOnly; SameSite[; Secure]`. Throws on what a
 * browser would drop silently, so a mistake shows in the first test rather
 * than as a sign-in that never sticks: a name or value outside RFC 6265, the
 * prefix rules (`__Secure-` needs `Secure`; `__Host-` needs `Secure` and
 * `Path=/`, and our cookies never carry a `Domain`), and `SameSite=None`
 * without `Secure`.
 */
export function serializeCookie(name: string, value: string, attributes: CookieAttributes): string {
  if (!COOKIE_NAME.test(name)) throw new TypeError(`Cookie name ${JSON.stringify(name)} is not an RFC 6265 token`);
  if (!COOKIE_VALUE.test(value))
    throw new TypeError(`The value of cookie ${name} holds a character a cookie value cannot carry`);
  const lower = name.toLowerCase();
  if ((lower.startsWith("__secure-") || lower.startsWith("__host-")) && !attributes.secure)
    throw new TypeError(`Cookie ${name}: a __Secure- or __Host- cookie must be Secure`);
  if (lower.startsWith("__host-") && attributes.path !== "/")
    throw new TypeError(`Cookie ${name}: a __Host- cookie must have Path=/, not ${attributes.path}`);
  if (attributes.sameSite === "None" && !attributes.secure)
    throw new TypeError(`Cookie ${name}: SameSite=None must be Secure`);
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
