import { lookup } from "node:dns/promises";
import type { Request as MiniflareRequest } from "miniflare";
import { MiniflareResponse } from "../../cloudflare/miniflareModule.ts";
import { isMachineAddress } from "./machineAddress.ts";
import { isNonPublicAddress } from "./nonPublicAddress.ts";

/** Resolves a host name to every address it names. */
export type ResolveHost = (hostname: string) => Promise<string[]>;

const resolveWithDns: ResolveHost = async (hostname) =>
  (await lookup(hostname, { all: true })).map((entry) => entry.address);

export interface TenantOutboundOptions {
  /**
   * `host:port` pairs the operator lets every project fetch although the rule
   * below refuses them (`platform up --allow-outbound`): a service of theirs
   * on this machine, say. Matched exactly against the URL's host and port.
   */
  allowed?: readonly string[];
  resolve?: ResolveHost;
  send?: typeof fetch;
  /** Whether an IP literal is one of this machine's own (read from its interfaces by default). */
  isMachineAddress?: (address: string) => boolean;
}

/**
 * A project's outbound `fetch` under `platform up` (its worker's
 * `outboundService`): a request to this machine (by any of its addresses,
 * `localhost` among them) or to an address no public route leads to
 * (nonPublicAddress.ts), by IP literal or by a name that resolves to one, is
 * refused with 403 `outbound_refused`, as Cloudflare's network refuses it, so
 * a tenant reaches the platform, its plugins and the fakes only through the
 * bindings it is given. What the operator allowed, and any other request,
 * goes out as sent.
 */
export function tenantOutbound(options: TenantOutboundOptions = {}) {
  const { resolve = resolveWithDns, send = fetch, isMachineAddress: isOwn = isMachineAddress } = options;
  const allowed = new Set(options.allowed ?? []);
  const refused = (address: string) => isNonPublicAddress(address) || isOwn(address);
  return async (request: MiniflareRequest): Promise<MiniflareResponse> => {
    const url = new URL(request.url);
    const { hostname } = url;
    if (!allowed.has(hostAndPort(url)) && (await reachesRefused(hostname, resolve, refused)))
      return MiniflareResponse.json(
        {
          error: {
            code: "outbound_refused",
            message: `A project cannot fetch ${hostname}: this machine's own, loopback and private addresses are refused; use the platform's bindings.`,
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

/** `host:port` as `--allow-outbound` names it: the URL's host (lower case, as URL writes it), its port or the scheme's. */
export function hostAndPort(url: URL): string {
  return `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`;
}

async function reachesRefused(
  hostname: string,
  resolve: ResolveHost,
  refused: (address: string) => boolean,
): Promise<boolean> {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (bare === "localhost" || bare.endsWith(".localhost")) return true;
  if (refused(bare)) return true;
  try {
    return (await resolve(bare)).some(refused);
  } catch {
    return false; // an unresolvable name reaches nothing; the fetch below fails as it would deployed
  }
}
