import type { V4WorkerOptions } from "miniflare";
import { API_WORKER, GATEWAY_WORKER } from "../dev/workerd/localPlatform.ts";
import { COMPATIBILITY_DATE } from "../../../contracts/workerCompatibility.ts";

/**
 * `platform up`'s entry worker on its one port, standing in for the deployed
 * platform's hostnames: `<slug>.localhost:N` and `localhost:N/<slug>/` go to
 * the gateway as `<slug>.<domain>` and `<domain>/<slug>/` would; any other
 * host (`127.0.0.1:N`) is the API and the console, as the API's own host is
 * deployed. No project is ever served on that origin, so none can read what
 * the console keeps there.
 */
const SCRIPT = `
export default {
  fetch(request, env) {
    const { hostname } = new URL(request.url);
    const project = hostname === "localhost" || hostname.endsWith(".localhost");
    return (project ? env.GATEWAY : env.API).fetch(request);
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
