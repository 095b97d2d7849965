import { Agent, createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";
import { type AddressInfo, connect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { isRuntimePath, publicRequestHeaders } from "./runtimeInternalHeaders.ts";

export interface PublicEntry {
  /** The port it listens on (the one asked for, or the one given for 0). */
  port: number;
  stop(): Promise<void>;
}

/** Hop-by-hop headers: about one connection, never passed on (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade"]);

function withoutHopByHop(raw: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2)
    if (!HOP_BY_HOP.has(raw[i]!.toLowerCase())) kept.push(raw[i]!, raw[i + 1]!);
  return kept;
}

function pathnameOf(target: string | undefined): string {
  try {
    return new URL(target ?? "/", "http://entry").pathname;
  } catch {
    return "/";
  }
}

/**
 * `platform up`'s public port: a Node HTTP server in front of Miniflare,
 * which listens on `upstream` (loopback, a port of its own). Miniflare's
 * entry worker obeys headers a client could send (`MF-Route-Override` picks
 * any internal worker) before any of the platform's workers run, so every
 * runtime-internal header is dropped here (runtimeInternalHeaders.ts), as
 * Cloudflare's edge never passes such a thing to a worker. Requests,
 * responses and WebSocket upgrades stream through unchanged otherwise; the
 * Host header too, so the platform sees the public address.
 */
export async function servePublicEntry(options: {
  host: string;
  port: number;
  upstream: { host: string; port: number };
}): Promise<PublicEntry> {
  const { upstream } = options;
  const agent = new Agent({ keepAlive: true });
  const sockets = new Set<Socket>();

  const forward = (req: IncomingMessage, res: ServerResponse) => {
    if (isRuntimePath(pathnameOf(req.url))) {
      res.writeHead(404, { "content-type": "text/plain" }).end("Not found\n");
      return req.resume();
    }
    const headers = withoutHopByHop(publicRequestHeaders(req.rawHeaders, req.socket.remoteAddress));
    const outbound = httpRequest(
      { host: upstream.host, port: upstream.port, method: req.method, path: req.url, headers, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.rawHeaders));
        answer.pipe(res);
        answer.on("error", () => res.destroy());
      },
    );
    outbound.on("error", () => {
      if (res.headersSent) res.destroy();
      else res.writeHead(502, { "content-type": "text/plain" }).end("The platform did not answer.\n");
    });
    // A client that goes away mid-answer stops the platform's side too (a long stream ends).
    res.on("close", () => {
      if (!res.writableFinished) outbound.destroy();
    });
    req.pipe(outbound);
  };

  const upgrade = (req: IncomingMessage, client: Duplex, head: Buffer) => {
    if (isRuntimePath(pathnameOf(req.url))) return client.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    const headers = publicRequestHeaders(req.rawHeaders, req.socket.remoteAddress);
    const target = connect(upstream.port, upstream.host, () => {
      let requestHead = `${req.method} ${req.url} HTTP/1.1\r\n`;
      for (let i = 0; i + 1 < headers.length; i += 2) requestHead += `${headers[i]}: ${headers[i + 1]}\r\n`;
      target.write(requestHead + "\r\n");
      if (head.length) target.write(head);
      target.pipe(client);
      client.pipe(target);
    });
    const close = () => {
      target.destroy();
      client.destroy();
    };
    target.on("error", close);
    client.on("error", close);
    target.on("close", close);
    client.on("close", close);
  };

  const server = createServer(forward);
  server.on("upgrade", upgrade);
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        agent.destroy();
      }),
  };
}
