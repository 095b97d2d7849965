import { describe, expect, it } from "vitest";
import { isNonPublicAddress } from "#src/dev/cli/up/nonPublicAddress.ts";

describe("isNonPublicAddress: what a project under `platform up` may not fetch", () => {
  it.each([
    "127.0.0.1",
    "127.8.9.10",
    "0.0.0.0",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "::1",
    "[::1]",
    "::",
    "fd00::1",
    "fe80::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::ffff:a00:1",
    "::ffff:192.168.0.1",
    "::127.0.0.1",
    "192.0.0.8",
    "192.0.2.1",
    "198.51.100.7",
    "203.0.113.9",
    "198.18.0.1",
    "198.19.255.255",
    "224.0.0.1",
    "240.0.0.1",
    "255.255.255.255",
    "64:ff9b::a00:1",
    "64:ff9b:1::1",
    "2002:a00:1::1",
    "2001::1",
    "2001:db8::1",
    "100::1",
    "ff02::1",
  ])("refuses %s", (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each([
    "8.8.8.8",
    "172.32.0.1",
    "100.128.0.1",
    "1.1.1.1",
    "192.0.3.1",
    "198.20.0.1",
    "223.255.255.255",
    "2606:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:8.8.8.8",
    "::ffff:808:808",
    "example.com",
    "not an address",
  ])("lets %s through", (address) => {
    expect(isNonPublicAddress(address)).toBe(false);
  });
});
