import { convertV4MiniflareOptions, Miniflare, NoOpLog } from "./miniflareModule.ts";
import type { MainModuleExports } from "./scriptUploadContract.ts";
import type { ScriptStarter, ScriptStartup, StartableScript } from "./scriptStartup.ts";
import { uploadedModuleType } from "./uploadedModuleType.ts";

/** Cloudflare's compatibility date for an upload that names none (compatibility-dates docs). */
const DEFAULT_COMPATIBILITY_DATE = "2021-11-02";
/** Where the modules sit in the probe worker; module names are relative to it. */
const ROOT = "/upload";
const PROBE_MODULE = "__platform_startup_probe__.js";
/** The event handlers a default export can register. */
const HANDLERS = ["fetch", "scheduled", "queue", "email", "tail", "trace", "tailStream", "test"];
/** Cloudflare gives a script's startup a CPU budget; locally a wall-clock bound keeps a hung start from blocking the upload. */
const STARTUP_TIMEOUT_MS = 15_000;

/**
 * The probe: imports the uploaded main module (so the runtime parses every
 * module and runs their top level) and answers what it exports.
 */
function probeSource(mainModule: string): string {
  return `import * as main from ${JSON.stringify(`./${mainModule}`)};
const HANDLERS = ${JSON.stringify(HANDLERS)};
const isClass = (value) => typeof value === "function" && value.prototype !== undefined;
function handlersOf(value) {
  if (isClass(value)) {
    const names = new Set();
    for (let p = value.prototype; p && p !== Object.prototype; p = Object.getPrototypeOf(p))
      for (const name of Object.getOwnPropertyNames(p)) names.add(name);
    return HANDLERS.filter((name) => names.has(name));
  }
  if (value && typeof value === "object") return HANDLERS.filter((name) => typeof value[name] === "function");
  return [];
}
export default {
  fetch() {
    const exports = Object.fromEntries(Object.keys(main).map((name) => [name, isClass(main[name]) ? "class" : "value"]));
    return Response.json({ exports, handlers: handlersOf(main.default) });
  },
};
`;
}

/** workerd's `service core:user:<name>: Uncaught SyntaxError: …` → `Uncaught SyntaxError: …`, as Cloudflare words it. */
export function withoutServicePrefix(message: string): string {
  return message.replace(/^service [^:]+:[^:]+:[^:]+: /, "").trim();
}

/**
 * Starts the script in a throwaway workerd (Miniflare, nothing persisted, no
 * bindings) with its compatibility date and flags, so the installed workerd
 * itself judges it: a module that does not parse, a top level that throws,
 * an import of a missing module, an unknown compatibility flag ("No such
 * compatibility flag: …"). A script that starts answers what its main module
 * exports.
 */
export const startInWorkerd: ScriptStarter = async (script: StartableScript): Promise<ScriptStartup> => {
  const errors: string[] = [];
  let mf: Miniflare | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    mf = new Miniflare(
      convertV4MiniflareOptions({
        log: new NoOpLog(),
        cf: false,
        handleStructuredLogs: ({ level, message }) => {
          if (level === "error") errors.push(withoutServicePrefix(message));
        },
        workers: [
          {
            name: "startup-probe",
            modulesRoot: ROOT,
            modules: [
              { type: "ESModule", path: `${ROOT}/${PROBE_MODULE}`, contents: probeSource(script.mainModule) },
              ...script.modules.map((module) => ({
                type: uploadedModuleType(module.contentType),
                path: `${ROOT}/${module.name}`,
                contents: module.content,
              })),
            ],
            compatibilityDate: script.compatibilityDate ?? DEFAULT_COMPATIBILITY_DATE,
            compatibilityFlags: script.compatibilityFlags,
          },
        ],
      }),
    );
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("Script startup exceeded CPU time limit.")), STARTUP_TIMEOUT_MS);
    });
    await Promise.race([mf.ready, timedOut]);
    const answer = await Promise.race([mf.dispatchFetch("http://startup-probe/"), timedOut]);
    if (!answer.ok)
      return { started: false, error: errors.join("\n") || `The script's probe answered ${answer.status}.` };
    return { started: true, ...((await answer.json()) as MainModuleExports) };
  } catch (error) {
    return { started: false, error: errors.join("\n") || (error instanceof Error ? error.message : String(error)) };
  } finally {
    clearTimeout(timer);
    await mf?.dispose().catch(() => {});
  }
};
