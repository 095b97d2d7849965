/**
 * The one rule for email addresses and domains, used by the login worker (the
 * provider's verified address), the project runtime (`auth.allow` domains, the
 * local sign-in form, every session read) and `email.send` (recipients).
 *
 * An address is a bare addr-spec: a dot-atom local part (no quotes, no empty,
 * leading, trailing or consecutive dots), one "@", a domain of LDH labels with
 * at least one dot and a top-level label that is not all digits. It is checked
 * as ASCII before any case folding: anything outside printable ASCII is refused
 * outright, so a look-alike such as U+212A KELVIN SIGN (which lower-cases to
 * "k") can never fold into an allowed domain. Internationalised domains are
 * accepted in their punycode (`xn--`) form only. The domain compares
 * lower-cased; the local part is kept as typed.
 */
const MAX_ADDRESS_CHARS = 254;
const MAX_LOCAL_CHARS = 64;

// RFC 5322 atext and dots.
const LOCAL = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/;

/** `"Example.COM"` → `"example.com"`; `null` when it is not a bare ASCII domain with a dot. */
export function normalizeDomain(input: string): string | null {
  if (!PRINTABLE_ASCII.test(input)) return null;
  const domain = input.toLowerCase();
  if (domain.length < 4 || domain.length > 253) return null;
  const labels = domain.split(".");
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l)) || /^[0-9]+$/.test(labels.at(-1)!)) return null;
  return domain;
}

/** Why `address` is not a plain `local@domain.tld` address (a phrase to follow its quoted value), or `null` when it is. */
export function addressProblem(address: unknown): string | null {
  if (typeof address !== "string") return "is not a string";
  if (address.length === 0) return "is empty";
  if (address.length > MAX_ADDRESS_CHARS) return `is longer than ${MAX_ADDRESS_CHARS} characters`;
  if (!PRINTABLE_ASCII.test(address) || /[<>"(),;:\\[\]]/.test(address)) {
    return "must be a bare address like name@example.com (no display name, spaces, quotes, brackets, commas or non-ASCII characters)";
  }
  const at = address.lastIndexOf("@");
  if (at <= 0 || address.indexOf("@") !== at) return "must contain exactly one @ with a name before it";
  const local = address.slice(0, at);
  if (local.length > MAX_LOCAL_CHARS || !LOCAL.test(local)) return "has an invalid part before the @";
  if (!normalizeDomain(address.slice(at + 1))) return "has an invalid domain (expected something like example.com)";
  return null;
}

interface ParsedEmail {
  /** The address with its domain lower-cased (the local part as typed). */
  email: string;
  local: string;
  domain: string;
}

function parseEmail(input: unknown): ParsedEmail | null {
  if (addressProblem(input) !== null) return null;
  const address = input as string;
  const at = address.indexOf("@");
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  return { email: `${local}@${domain}`, local, domain };
}

export type EmailCheck =
  | { ok: true; email: string; local: string }
  | { ok: false; reason: "malformed" }
  | { ok: false; reason: "domain_not_allowed"; email: string; domain: string };

/**
 * The sign-in rule: `input` is an address and, unless `domains` is `null`
 * (every account), its domain equals one of `domains` exactly (no suffix
 * matching: neither `a@example.com.evil.io` nor `a@sub.example.com` passes for
 * `example.com`). `domains` are compared as `normalizeDomain` writes them.
 */
export function checkEmail(input: unknown, domains: readonly string[] | null): EmailCheck {
  const parsed = parseEmail(input);
  if (!parsed) return { ok: false, reason: "malformed" };
  if (domains && !domains.some((d) => normalizeDomain(d) === parsed.domain))
    return { ok: false, reason: "domain_not_allowed", email: parsed.email, domain: parsed.domain };
  return { ok: true, email: parsed.email, local: parsed.local };
}
