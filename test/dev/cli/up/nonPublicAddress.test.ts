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
  ])("refuses %s", (address) => {
    expect(isNonPublicAddress(address)).toBe(true);
  });

  it.each(["8.8.8.8", "172.32.0.1", "100.128.0.1", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.8.8", "example.com"])(
    "lets %s through",
    (address) => {
      expect(isNonPublicAddress(address)).toBe(false);
    },
  );
});
