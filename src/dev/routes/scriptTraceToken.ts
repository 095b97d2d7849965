import { importKey } from "../../core/crypto/keys.ts";
import { signature, signatureValid } from "../../core/crypto/signed.ts";

/**
 * What a pushed project's tail forwarder shows `platform up`'s trace intake
 * to say whose traces it hands over: the HMAC of the script's name under a
 * key the intake and the local platform alone hold (fresh for every start).
 * Only the forwarder wired beside a script holds that script's token; the
 * project's own code has no binding to it, so it can put lines in no log,
 * and a token names one script only, so no project writes another's log.
 * Used in Node and in workerd alike (WebCrypto).
 */
export const TRACE_SCRIPT_HEADER = "x-platform-trace-script";

export async function scriptTraceToken(intakeKey: string, script: string): Promise<string> {
  return signature(await importKey(intakeKey, "HMAC-SHA256"), script);
}

/** Whether `token` is `script`'s (constant time). */
export async function isScriptTraceToken(intakeKey: string, script: string, token: unknown): Promise<boolean> {
  return signatureValid(await importKey(intakeKey, "HMAC-SHA256"), script, token);
}
