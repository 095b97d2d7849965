/**
 * What every provider's signature verifier answers: the delivery is authentic
 * and fresh, or why not. `reason` is stable (the delivery log and the 401's
 * message show it); `message` says what to fix.
 */
export type WebhookRefusal = "missing" | "malformed" | "stale" | "bad_signature" | "bad_secret";

export type WebhookCheck = { ok: true } | { ok: false; reason: WebhookRefusal; message: string };

/** The request as the verifiers see it: headers (case-insensitive) and the body exactly as received. */
export interface SignedDelivery {
  headers: Headers;
  body: Uint8Array;
  /** The verifier's clock, ms since the epoch (injected: tests move it). */
  nowMS: number;
}

export function refuse(reason: WebhookRefusal, message: string): WebhookCheck {
  return { ok: false, reason, message };
}

/** Whether a Unix-seconds timestamp lies within `toleranceSeconds` of the clock, either way. */
export function timestampFresh(seconds: number, nowMS: number, toleranceSeconds: number): boolean {
  return Math.abs(nowMS / 1000 - seconds) <= toleranceSeconds;
}
