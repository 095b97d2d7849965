import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { servePublicEntry } from "#src/dev/cli/up/publicEntry.ts";

const HOST = "127.0.0.1";
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** Stands in for Miniflare's entry: answers what it received, and echoes a WebSocket-style upgrade. */
async function upstream(): Promise<{ port: number; seen: IncomingMessage[] }> {
  const seen: IncomingMessage[] = [];
  const server: Server = createServer(async (req, res) => {
    seen.push(req);
    let body = "";
    for await (const chunk of req) body += chunk;
    res.writeHead(
      201,
      [
        ["Set-Cookie", "a=1"],
        ["Set-Cookie", "b=2"],
        ["Content-Type", "application/json"],
      ].flat(),
    );
    res.end(JSON.stringify({ method: req.method, url: req.url, headers: req.rawHeaders, body }));
  });
  const upgraded = new Set<Duplex>();
  server.on("upgrade", (req, socket) => {
    seen.push(req);
    upgraded.add(socket);
    socket.write("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    socket.on("data", (data) => socket.write(`echo:${data}`));
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  stops.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
      }),
  );
  return { port: (server.address() as AddressInfo).port, seen };
}

async function entryTo(port: number) {
  const entry = await servePublicEntry({ host: HOST, port: 0, upstream: { host: HOST, port } });
  stops.push(entry.stop);
  return `http://${HOST}:${entry.port}`;
}

const headerNames = (raw: string[]) => raw.filter((_, i) => i % 2 === 0).map((name) => name.toLowerCase());

describe("servePublicEntry: platform up's public port in front of Miniflare", () => {
  it("drops MF-Route-Override and the other runtime-internal headers, and passes the rest and the body through", async () => {
    const { port } = await upstream();
    const entry = await entryTo(port);
    // node:http, not fetch: fetch will not send a Host header of its own.
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      const outgoing = request(`${entry}/shop/cart?x=1`, {
        method: "POST",
        headers: {
          host: "shop.localhost:8800",
          "MF-Route-Override": "platform-api",
          "MF-Original-URL": "http://127.0.0.1/admin",
          "CF-Connecting-IP": "203.0.113.9",
          "X-Forwarded-Proto": "https",
          cookie: "session=s",
        },
      });
      outgoing.on("response", resolve).on("error", reject);
      outgoing.end("x".repeat(100_000));
    });
    expect(response.statusCode).toBe(201);
    expect(response.headers["set-cookie"]).toEqual(["a=1", "b=2"]);
    let text = "";
    for await (const chunk of response) text += chunk;
    const seen = JSON.parse(text) as { method: string; url: string; headers: string[]; body: string };
    expect(seen).toMatchObject({ method: "POST", url: "/shop/cart?x=1", body: "x".repeat(100_000) });
    const names = headerNames(seen.headers);
    expect(names.filter((name) => name.startsWith("mf-") || name === "x-forwarded-proto")).toEqual([]);
    const header = (name: string) => seen.headers[seen.headers.findIndex((h) => h.toLowerCase() === name) + 1];
    expect(header("host")).toBe("shop.localhost:8800");
    expect(header("cookie")).toBe("session=s");
    // The client's own address, not the one it claimed.
    expect(header("cf-connecting-ip")).toBe("127.0.0.1");
    expect(names.filter((name) => name === "cf-connecting-ip")).toHaveLength(1);
  });

  it.each(["/cdn-cgi/local/scheduled", "/cdn-cgi/local/platform-proxy"])(
    "answers %s 404 itself: Miniflare's local tools are not public",
    async (pathname) => {
      const { port, seen } = await upstream();
      const response = await fetch(`${await entryTo(port)}${pathname}`);
      expect(response.status).toBe(404);
      expect(seen).toEqual([]);
    },
  );

  it("answers 502 when the platform behind it does not answer", async () => {
    const { port } = await upstream();
    const entry = await entryTo(port);
    await stops.shift()!(); // the upstream stops
    const response = await fetch(`${entry}/`);
    expect(response.status).toBe(502);
    expect(await response.text()).toContain("The platform did not answer.");
  });

  it("carries a WebSocket upgrade both ways, without runtime-internal headers", async () => {
    const { port, seen } = await upstream();
    const entry = new URL(await entryTo(port));
    const socket = connect(Number(entry.port), HOST);
    stops.push(async () => void socket.destroy());
    let received = "";
    socket.on("data", (data) => {
      received += data;
      if (received.includes("\r\n\r\n") && !received.includes("echo:")) socket.write("ping");
    });
    socket.write(
      "GET /live HTTP/1.1\r\nHost: a.localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nMF-Route-Override: fake-email\r\n\r\n",
    );
    await expect.poll(() => received).toContain("echo:ping");
    expect(received).toMatch(/^HTTP\/1\.1 101/);
    expect(headerNames(seen[0]!.rawHeaders)).not.toContain("mf-route-override");
    expect(seen[0]!.url).toBe("/live");
  });
});
