import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { LedgerAttempt } from "./chaosHistory.ts";

export interface LedgerServer {
  /** What steps fetch: `POST <url>/attempts` with `{ runId, step, attempt, build? }`. */
  url: string;
  attempts(): LedgerAttempt[];
  close(): Promise<void>;
}

/**
 * The external ledger: a loopback HTTP server in the chaos driver's process, outside the platform, so a
 * crash of `platform dev` cannot lose what a step reported. It records attempts (steps run at least once);
 * the checker reasons about commits from the runs' own logs.
 */
export async function startLedgerServer(host = "127.0.0.1"): Promise<LedgerServer> {
  const attempts: LedgerAttempt[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      if (request.method !== "POST" || request.url !== "/attempts") {
        response.writeHead(404).end();
        return;
      }
      try {
        const { runId, step, attempt, build } = JSON.parse(body) as Partial<LedgerAttempt>;
        if (typeof runId !== "string" || typeof step !== "string" || typeof attempt !== "number")
          throw new Error("an attempt is { runId, step, attempt, build? }");
        if (build !== undefined && typeof build !== "number") throw new Error("an attempt's build is a number");
        attempts.push({ runId, step, attempt, ...(build === undefined ? {} : { build }) });
        response.writeHead(204).end();
      } catch (error) {
        response.writeHead(400, { "content-type": "text/plain" }).end(String(error));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}`,
    attempts: () => [...attempts],
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
