import type { V4WorkerOptions } from "miniflare";
import { API_WORKER, GATEWAY_WORKER } from "../dev/localPlatform.ts";
import { COMPATIBILITY_DATE } from "../repoPaths.ts";

/** First path segments the API worker answers on `http://127.0.0.1:N/` (its routes and the console). */
export const API_PATH_PREFIXES = ["", "health", "admin", "cli", "projects", "oauth", "internal", "console"];

/**
 * `platform up`'s entry worker on its one port, standing in for the deployed
 * platform's hostnames: `<slug>.localhost:N` and `localhost:N/<slug>/` go to
 * the gateway as `<slug>.<domain>` and `<domain>/<slug>/` would;
 * `127.0.0.1:N` is the API (`--api http://127.0.0.1:N`), except that a first
 * path segment that is none of its routes is a private project's prefix,
 * handed to the gateway as `localhost:N/<slug>/`.
 */
const SCRIPT = `
const API = new Set(${JSON.stringify(API_PATH_PREFIXES)});
export default {
  fetch(request, env) {
    const url = new URL(request.url);
    if (url.hostname === "localhost" || url.hostname.endsWith(".localhost")) return env.GATEWAY.fetch(request);
    if (API.has(url.pathname.split("/")[1])) return env.API.fetch(request);
    url.hostname = "localhost";
    return env.GATEWAY.fetch(new Request(url, request));
  },
};
`;

export function frontWorker(): V4WorkerOptions {
  return {
    name: "up-front",
    modules: true,
    script: SCRIPT,
    compatibilityDate: COMPATIBILITY_DATE,
    serviceBindings: { GATEWAY: GATEWAY_WORKER, API: API_WORKER },
  };
}
