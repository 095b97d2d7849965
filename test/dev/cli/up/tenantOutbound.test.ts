import { Request as MiniflareRequest } from "miniflare";
import { describe, expect, it, vi } from "vitest";
import { tenantOutbound } from "#src/dev/cli/up/tenantOutbound.ts";

/** Names as a resolver would answer them: one rebinds to loopback, one is public. */
const NAMES: Record<string, string[]> = {
  "rebind.example": ["93.184.216.34", "127.0.0.1"],
  "public.example": ["93.184.216.34"],
};
const resolve = async (hostname: string) => {
  if (!NAMES[hostname]) throw new Error(`ENOTFOUND ${hostname}`);
  return NAMES[hostname];
};

describe("tenantOutbound: a project's own fetch under `platform up`", () => {
  it.each([
    "http://127.0.0.1:8787/__fake/outbox",
    "http://localhost:9000/",
    "http://shop.localhost:8787/",
    "http://[::1]:8080/",
    "http://10.0.0.5/",
    "http://169.254.169.254/latest/meta-data",
    "http://rebind.example/",
  ])("refuses %s with 403 outbound_refused and sends nothing", async (url) => {
    const send = vi.fn<typeof fetch>();
    const response = await tenantOutbound(resolve, send)(new MiniflareRequest(url));
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe("outbound_refused");
    expect(body.error.message).toContain("loopback and private addresses are refused");
    expect(send).not.toHaveBeenCalled();
  });

  it("sends a request to a public address as it was made and answers what came back", async () => {
    const send = vi.fn<typeof fetch>(async () => new Response("hello", { status: 201, headers: { "x-a": "1" } }));
    const request = new MiniflareRequest("https://public.example/path?q=1", { method: "POST", body: "hi" });
    const response = await tenantOutbound(resolve, send)(request);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-a")).toBe("1");
    expect(await response.text()).toBe("hello");
    const [url, init] = send.mock.calls[0]!;
    expect(url).toBe("https://public.example/path?q=1");
    expect(init?.method).toBe("POST");
  });
});
