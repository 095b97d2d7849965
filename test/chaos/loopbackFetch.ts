import { request } from "node:http";

/** What the chaos driver and clients fetch with: the parts of `fetch` they use. */
export type ChaosFetch = (
  url: string,
  init?: { method?: string; body?: string; signal?: AbortSignal },
) => Promise<Response>;

/**
 * `fetch` for `http://<slug>.localhost:N/…` (a project pushed to `platform up`): Node's resolver does not know
 * `*.localhost`, and its `fetch` sends the URL's host whatever Host header it is given, so this connects to
 * 127.0.0.1:N itself and sends the URL's host as the Host header.
 */
export const loopbackFetch: ChaosFetch = (url, init = {}) => {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const outgoing = request(
      {
        host: "127.0.0.1",
        port: target.port,
        method: init.method ?? "GET",
        path: target.pathname + target.search,
        headers: { host: target.host },
        signal: init.signal,
      },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on("data", (chunk: Buffer) => chunks.push(chunk));
        answer.on("error", reject);
        answer.on("end", () => {
          const status = answer.statusCode ?? 502;
          // A Response refuses a body with a null-body status.
          resolve(new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), { status }));
        });
      },
    );
    outgoing.on("error", reject);
    outgoing.end(init.body);
  });
};
