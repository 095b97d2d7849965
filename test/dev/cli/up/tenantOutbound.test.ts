import { Request as MiniflareRequest } from "miniflare";
import type { networkInterfaces } from "node:os";
import { describe, expect, it, vi } from "vitest";
import { isMachineAddress } from "#src/dev/cli/up/machineAddress.ts";
import { tenantOutbound } from "#src/dev/cli/up/tenantOutbound.ts";

/** Names as a resolver would answer them: one rebinds to loopback, one to the machine's own address, one is public. */
const NAMES: Record<string, string[]> = {
  "rebind.example": ["93.184.216.34", "127.0.0.1"],
  "machine.example": ["198.51.200.7"],
  "public.example": ["93.184.216.34"],
};
const resolve = async (hostname: string) => {
  if (!NAMES[hostname]) throw new Error(`ENOTFOUND ${hostname}`);
  return NAMES[hostname];
};
/** This machine, as its interfaces would say: a public address of its own besides loopback. */
const INTERFACES = {
  lo: [{ address: "127.0.0.1", family: "IPv4", internal: true }],
  eth0: [{ address: "198.51.200.7", family: "IPv4", internal: false }],
} as unknown as ReturnType<typeof networkInterfaces>;

const outbound = (send: typeof fetch, allowed: string[] = []) =>
  tenantOutbound({ resolve, send, isMachineAddress: (address) => isMachineAddress(address, INTERFACES), allowed });

describe("tenantOutbound: a project's own fetch under `platform up`", () => {
  it.each([
    "http://127.0.0.1:8787/__fake/outbox",
    "http://localhost:9000/",
    "http://shop.localhost:8787/",
    "http://[::1]:8080/",
    "http://10.0.0.5/",
    "http://169.254.169.254/latest/meta-data",
    "http://rebind.example/",
    // The machine by a public address of its own reaches what listens on all its interfaces.
    "http://198.51.200.7:5432/",
    "http://[::ffff:198.51.200.7]:5432/",
    "http://machine.example/",
    // An operator's allowance is that host and port alone.
    "http://127.0.0.1:5433/",
    "http://localhost:5432/",
  ])("refuses %s with 403 outbound_refused and sends nothing", async (url) => {
    const send = vi.fn<typeof fetch>();
    const response = await outbound(send, ["127.0.0.1:5432"])(new MiniflareRequest(url));
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("outbound_refused");
    expect(body.error.message).toContain("this machine's own, loopback and private addresses are refused");
    expect(send).not.toHaveBeenCalled();
  });

  it.each([
    ["http://127.0.0.1:5432/ledger", "127.0.0.1:5432"],
    ["http://[::1]:8080/", "[::1]:8080"],
    ["http://10.0.0.5/", "10.0.0.5:80"],
    ["https://10.0.0.5/", "10.0.0.5:443"],
  ])("sends %s, which the operator allowed as %s", async (url, allowed) => {
    const send = vi.fn<typeof fetch>(async () => new Response("ok"));
    const response = await outbound(send, [allowed])(new MiniflareRequest(url));
    expect(response.status).toBe(200);
    expect(send.mock.calls[0]![0]).toBe(url);
  });

  it("sends a request to a public address as it was made and answers what came back", async () => {
    const send = vi.fn<typeof fetch>(async () => new Response("hello", { status: 201, headers: { "x-a": "1" } }));
    const request = new MiniflareRequest("https://public.example/path?q=1", { method: "POST", body: "hi" });
    const response = await outbound(send)(request);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-a")).toBe("1");
    expect(await response.text()).toBe("hello");
    const [url, init] = send.mock.calls[0]!;
    expect(url).toBe("https://public.example/path?q=1");
    expect(init?.method).toBe("POST");
  });
});
