import { BlockList, isIP } from "node:net";
import { networkInterfaces } from "node:os";

/**
 * Whether an IP literal is one of this machine's own, on any interface
 * (`::ffff:`-mapped IPv4 included): a tenant fetching it would reach every
 * service on the machine that listens on all interfaces, whatever range the
 * address is in (a public one, or a documentation range on a test network).
 * A name answers false: resolve it first.
 */
export function isMachineAddress(
  address: string,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): boolean {
  const bare = address.replace(/^\[|\]$/g, "").toLowerCase();
  const version = isIP(bare);
  if (version === 0) return false;
  const own = new BlockList();
  for (const entries of Object.values(interfaces))
    for (const entry of entries ?? []) {
      // A link-local IPv6 address carries its interface (`fe80::1%eth0`); the range rules refuse those anyway.
      const ip = entry.address.split("%")[0]!;
      if (isIP(ip)) own.addAddress(ip, isIP(ip) === 4 ? "ipv4" : "ipv6");
    }
  return own.check(bare, version === 4 ? "ipv4" : "ipv6");
}
