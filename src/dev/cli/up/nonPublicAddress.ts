import { isIP } from "node:net";

/**
 * Whether an address is one of the machine's own or a private network's
 * (loopback, RFC 1918, link-local, CGNAT, unspecified, IPv6 unique-local and
 * link-local, and IPv4 mapped into IPv6): what Cloudflare's network never lets
 * a worker reach, so neither does `platform up`. A name that is not an IP
 * literal answers false: resolve it first.
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").toLowerCase();
  const version = isIP(bare);
  if (version === 4) return isNonPublicV4(bare);
  if (version !== 6) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(bare);
  if (mapped) return isNonPublicV4(mapped[1]!);
  if (/^::ffff:[0-9a-f]{1,4}:[0-9a-f]{1,4}$/.test(bare)) return true; // mapped, hex form: judge it as refused
  if (bare === "::" || bare === "::1") return true;
  const first = Number.parseInt(bare.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80;
}

function isNonPublicV4(address: string): boolean {
  const [a, b] = address.split(".").map(Number) as [number, number];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}
