import { networkInterfaces } from "node:os";
import { isNonPublicAddress } from "#src/dev/cli/up/nonPublicAddress.ts";

/**
 * An IPv4 address of this machine that a project pushed to `platform up` may fetch: `platform up` refuses a
 * tenant's fetch to loopback and private addresses (tenantOutbound.ts), so the chaos ledger listens on one
 * that its rule lets through, or the `up` backend cannot run here (null).
 */
export function tenantReachableAddress(
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): string | null {
  for (const addresses of Object.values(interfaces))
    for (const { family, address, internal } of addresses ?? [])
      if (family === "IPv4" && !internal && !isNonPublicAddress(address)) return address;
  return null;
}
