import type { MainModuleExports } from "./scriptUploadContract.ts";

/** An uploaded script as the runtime loads it: its modules (by part name), entry and compatibility settings. */
export interface StartableScript {
  name: string;
  mainModule: string;
  modules: { name: string; contentType: string; content: Uint8Array }[];
  compatibilityDate?: string;
  compatibilityFlags?: string[];
}

/** What starting a script showed: its main module's exports, or the runtime's own words for why it did not start. */
export type ScriptStartup = ({ started: true } & MainModuleExports) | { started: false; error: string };

/**
 * Starts an uploaded script the way Cloudflare validates an upload before
 * accepting it: the runtime parses every module, runs their top level and
 * refuses unknown compatibility flags. `platform up` and the Node tests start
 * it in workerd (workerdScriptStarter.ts); the workerd tests reach that
 * starter through a service binding.
 */
export type ScriptStarter = (script: StartableScript) => Promise<ScriptStartup>;
