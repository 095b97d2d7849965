import { lookup } from "node:dns/promises";
import type { Request as MiniflareRequest } from "miniflare";
import { MiniflareResponse } from "../../cloudflare/miniflareModule.ts";
import { isNonPublicAddress } from "./nonPublicAddress.ts";

/** Resolves a host name to every address it names. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

const resolveWithDns: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true })).map((entry) => entry.address);

/**
 * A project's outbound `fetch` under `platform up` (its worker's
 * `outboundService`): a request to the machine's loopback or a private
 * address, by IP literal or by a name that resolves to one, is refused with
 * 403 `outbound_refused`, as Cloudflare's network refuses it, so a tenant
 * reaches the platform, its plugins and the fakes only through the bindings it
 * is given. Any other request goes out as sent.
 */
export function tenantOutbound(resolve: ResolveHost = resolveWithDns, send: typeof fetch = fetch) {
  return async (request: MiniflareRequest): Promise<MiniflareResponse> => {
    const { hostname } = new URL(request.url);
    if (await reachesNonPublic(hostname, resolve))
      return MiniflareResponse.json(
        {
          error: {
            code: "outbound_refused",
            message: `A project cannot fetch ${hostname}: loopback and private addresses are refused; use the platform's bindings.`,
          },
        },
        { status: 403 },
      );
    const response = await send(request.url, {
      method: request.method,
      headers: request.headers as unknown as HeadersInit,
      body: request.body as unknown as BodyInit | null,
      redirect: "manual",
      // @ts-expect-error Node's fetch needs `duplex` to stream a request body.
      duplex: "half",
    });
    return new MiniflareResponse(response.body as never, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers as never,
    });
  };
}

async function reachesNonPublic(hostname: string, resolve: ResolveHost): Promise<boolean> {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  if (isNonPublicAddress(bare)) return true;
  try {
    return (await resolve(bare)).some(isNonPublicAddress);
  } catch {
    return false; // an unresolvable name reaches nothing; the fetch below fails as it would deployed
  }
}
