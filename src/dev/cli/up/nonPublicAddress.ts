import { BlockList, isIP } from "node:net";

/**
 * The address ranges no public route leads to (IANA's special-purpose
 * registries, RFC 6890 and its updates): the machine's own, private networks,
 * documentation, benchmarking, multicast and reserved space, and the IPv6
 * prefixes that carry an IPv4 address inside (NAT64, 6to4, IPv4-compatible),
 * which could lead to a private one. Node's BlockList also judges an IPv4
 * address written as IPv6 (`::ffff:10.0.0.1`, `::ffff:a00:1`) by the IPv4 ranges.
 */
const NON_PUBLIC_RANGES: readonly [network: string, prefix: number, type: "ipv4" | "ipv6"][] = [
  ["0.0.0.0", 8, "ipv4"], // "this network"
  ["10.0.0.0", 8, "ipv4"],
  ["100.64.0.0", 10, "ipv4"], // carrier-grade NAT
  ["127.0.0.0", 8, "ipv4"],
  ["169.254.0.0", 16, "ipv4"], // link-local, cloud metadata services among them
  ["172.16.0.0", 12, "ipv4"],
  ["192.0.0.0", 24, "ipv4"], // IETF protocol assignments
  ["192.0.2.0", 24, "ipv4"], // documentation (TEST-NET-1)
  ["192.88.99.0", 24, "ipv4"], // 6to4 relays
  ["192.168.0.0", 16, "ipv4"],
  ["198.18.0.0", 15, "ipv4"], // benchmarking
  ["198.51.100.0", 24, "ipv4"], // documentation (TEST-NET-2)
  ["203.0.113.0", 24, "ipv4"], // documentation (TEST-NET-3)
  ["224.0.0.0", 4, "ipv4"], // multicast
  ["240.0.0.0", 4, "ipv4"], // reserved, broadcast included
  ["::", 96, "ipv6"], // unspecified, loopback, IPv4-compatible
  ["64:ff9b::", 96, "ipv6"], // NAT64
  ["64:ff9b:1::", 48, "ipv6"], // local NAT64
  ["100::", 64, "ipv6"], // discard
  ["2001::", 23, "ipv6"], // IETF protocol assignments, Teredo among them
  ["2001:db8::", 32, "ipv6"], // documentation
  ["2002::", 16, "ipv6"], // 6to4
  ["fc00::", 7, "ipv6"], // unique-local
  ["fe80::", 10, "ipv6"], // link-local
  ["ff00::", 8, "ipv6"], // multicast
];

const NON_PUBLIC = new BlockList();
for (const [network, prefix, type] of NON_PUBLIC_RANGES) NON_PUBLIC.addSubnet(network, prefix, type);

/**
 * Whether an address is in a range no public route leads to (above): what
 * Cloudflare's network never lets a worker reach, so neither does
 * `platform up`. A name that is not an IP literal answers false: resolve it
 * first.
 */
export function isNonPublicAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, "").toLowerCase();
  const version = isIP(bare);
  if (version === 0) return false;
  return NON_PUBLIC.check(bare, version === 4 ? "ipv4" : "ipv6");
}
