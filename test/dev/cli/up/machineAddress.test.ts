import type { NetworkInterfaceInfo } from "node:os";
import { describe, expect, it } from "vitest";
import { isMachineAddress } from "#src/dev/cli/up/machineAddress.ts";

function nic(address: string, family: "IPv4" | "IPv6" = "IPv4", internal = false): NetworkInterfaceInfo {
  return {
    address,
    family,
    internal,
    netmask: "",
    mac: "",
    cidr: null,
    ...(family === "IPv6" ? { scopeid: 0 } : {}),
  } as NetworkInterfaceInfo;
}

/** A machine with loopback, a documentation-range address (as a test network gives) and a public IPv6 one. */
const INTERFACES = {
  lo: [nic("127.0.0.1", "IPv4", true), nic("::1", "IPv6", true)],
  eth0: [nic("192.0.2.2"), nic("2606:4700:10::6816:1", "IPv6"), nic("fe80::1%eth0", "IPv6")],
};

describe("isMachineAddress: this machine's own addresses, which a tenant may not fetch", () => {
  it.each([
    "192.0.2.2",
    "::ffff:192.0.2.2",
    "[::ffff:c000:202]",
    "2606:4700:10::6816:1",
    "127.0.0.1",
    "::1",
    "fe80::1",
  ])("%s is the machine's", (address) => {
    expect(isMachineAddress(address, INTERFACES)).toBe(true);
  });

  it.each(["192.0.2.3", "8.8.8.8", "2606:4700:10::6816:2", "example.com", ""])("%s is not", (address) => {
    expect(isMachineAddress(address, INTERFACES)).toBe(false);
  });
});
