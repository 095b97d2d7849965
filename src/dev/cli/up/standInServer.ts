import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ScriptUploadStandIn } from "../../cloudflare/scriptUploadStandIn.ts";

/** Cloudflare caps a script upload well below this; a bigger body is not an upload. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

async function toRequest(req: IncomingMessage, origin: string): Promise<Request> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > MAX_BODY_BYTES) throw new Error("body too large");
    chunks.push(chunk);
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (typeof value === "string") headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  return new Request(origin + req.url, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
  });
}

/**
 * The stand-in of Cloudflare's script-upload API over loopback HTTP, for the
 * API worker's `CLOUDFLARE_API_BASE` under `platform up`:
 * `http://127.0.0.1:<port>/client/v4`.
 */
export async function serveStandIn(
  standIn: ScriptUploadStandIn,
  host: string,
): Promise<{ apiBase: string; stop(): Promise<void> }> {
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      try {
        const response = await standIn.fetch(await toRequest(req, `http://${host}`));
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(Buffer.from(await response.arrayBuffer()));
      } catch (error) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            success: false,
            errors: [{ code: 10000, message: String(error) }],
            messages: [],
            result: null,
          }),
        );
      }
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    apiBase: `http://${host}:${port}/client/v4`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
