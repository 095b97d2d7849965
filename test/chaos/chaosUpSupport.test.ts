import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { chaosProjectSource } from "./chaosProjectSource.ts";
import { loopbackFetch } from "./loopbackFetch.ts";

describe("chaosProjectSource", () => {
  it("changes only the build and, when given, the ledger's address", () => {
    const base = chaosProjectSource(0);
    expect(base).toContain("const BUILD = 0;");
    expect(base).toContain("const LEDGER_URL = null;");
    const pushed = chaosProjectSource(2, "http://192.0.2.2:4000");
    expect(pushed).toContain("const BUILD = 2;");
    expect(pushed).toContain('const LEDGER_URL = "http://192.0.2.2:4000";');
    expect(pushed.replace("const BUILD = 2;", "const BUILD = 0;").replace('"http://192.0.2.2:4000"', "null")).toBe(
      base,
    );
  });
});

describe("loopbackFetch", () => {
  it("sends a <slug>.localhost URL's request to 127.0.0.1 with that host, and reads the answer", async () => {
    const server = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => (body += chunk));
      request.on("end", () => {
        if (request.url === "/empty") return response.writeHead(204).end();
        response
          .writeHead(201)
          .end(JSON.stringify({ host: request.headers.host, method: request.method, url: request.url, body }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const answer = await loopbackFetch(`http://chaos.localhost:${port}/start/keyed?x=1`, {
        method: "POST",
        body: "{}",
      });
      expect(answer.status).toBe(201);
      expect(await answer.json()).toEqual({
        host: `chaos.localhost:${port}`,
        method: "POST",
        url: "/start/keyed?x=1",
        body: "{}",
      });
      const empty = await loopbackFetch(`http://chaos.localhost:${port}/empty`);
      expect(empty.status).toBe(204);
      expect(await empty.text()).toBe("");
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
