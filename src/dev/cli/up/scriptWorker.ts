import type { V4WorkerOptions } from "miniflare";
import { MiniflareResponse } from "../../cloudflare/miniflareModule.ts";
import type { ScriptBinding } from "../../../workers/api/projectScriptBindings.ts";
import type { AcceptedScript } from "../../cloudflare/scriptUploadStandIn.ts";
import { uploadedModuleType } from "../../cloudflare/uploadedModuleType.ts";
import { localScriptBindings } from "../dev/workerd/localScriptBindings.ts";
import { tenantOutbound } from "./tenantOutbound.ts";

type ServiceDesignator = NonNullable<V4WorkerOptions["serviceBindings"]>[string];

/** Where a script's modules sit in its worker; module names are relative to it. */
const MODULES_ROOT = "/script";

/**
 * The Miniflare worker for a script the stand-in accepted, wired as
 * Cloudflare would run it in the dispatch namespace: its modules (main
 * module first), compatibility settings and each binding of its metadata. It
 * runs in a workerd of its own (projectInstances.ts), so a service binding
 * reaches the platform worker it names over that worker's loopback socket
 * (`services`: deployed name → `host:port`); a service the platform does not
 * run answers 502, as a call to a script that is not there. Its tail
 * consumer is wired beside it (tailForwarder.ts). Its own `fetch` goes
 * through tenantOutbound.ts, which refuses this machine and private
 * addresses, but for the `host:port` pairs in `allowOutbound`.
 */
export function scriptWorker(
  script: AcceptedScript,
  services: Readonly<Record<string, string>>,
  allowOutbound: readonly string[] = [],
): V4WorkerOptions {
  const main = script.metadata.main_module!;
  const names = [main, ...[...script.modules.keys()].filter((name) => name !== main)];
  const scriptBindings = (script.metadata.bindings ?? []) as ScriptBinding[];
  const bound = localScriptBindings(scriptBindings);
  return {
    name: script.name,
    modulesRoot: MODULES_ROOT,
    modules: names.map((name) => {
      const module = script.modules.get(name)!;
      return {
        type: uploadedModuleType(module.contentType),
        path: `${MODULES_ROOT}/${name}`,
        contents: module.content,
      };
    }),
    compatibilityDate: script.metadata.compatibility_date,
    compatibilityFlags: script.metadata.compatibility_flags,
    bindings: bound.bindings,
    durableObjects: bound.durableObjects,
    serviceBindings: Object.fromEntries(
      scriptBindings.flatMap((binding) =>
        binding.type === "service" ? [[binding.name, platformService(binding.service, services)]] : [],
      ),
    ),
    outboundService: tenantOutbound({ allowed: allowOutbound }),
  };
}

/** A platform worker over its socket; any other name answers 502, as a call to a script that is not there. */
function platformService(service: string, services: Readonly<Record<string, string>>): ServiceDesignator {
  if (Object.hasOwn(services, service)) return { external: { address: services[service]!, http: {} } };
  return async () =>
    MiniflareResponse.json(
      { error: { code: "upstream_error", message: `No worker named "${service}" runs on this platform.` } },
      { status: 502 },
    );
}
