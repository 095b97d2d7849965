import { openSession, type SessionRecord } from "./sessionSeal.ts";

/**
 * The records of the session cookie values this isolate has opened, so a
 * browser's cookie, sent unchanged with every request, is decrypted once per
 * isolate rather than once per request. Only values that opened under the
 * secret are kept (keyed by secret and value: the same bytes always open to
 * the same record); a value that does not open is tried again each time.
 * The checks that depend on the clock or the settings (`sessionHolds`) and on
 * the platform (`SessionCache`) still run on every read. At most
 * `MAX_ENTRIES` values (the oldest goes first).
 */
const MAX_ENTRIES = 5_000;
const bySecret = new Map<string, Map<string, Readonly<SessionRecord>>>();

export async function openSessionOnce(workerSecret: string, value: string): Promise<Readonly<SessionRecord> | null> {
  let opened = bySecret.get(workerSecret);
  const known = opened?.get(value);
  if (known) return known;
  const record = await openSession(workerSecret, value);
  if (record) {
    if (!opened) {
      opened = new Map();
      bySecret.set(workerSecret, opened);
    }
    if (opened.size >= MAX_ENTRIES) opened.delete(opened.keys().next().value!);
    opened.set(value, Object.freeze(record));
  }
  return record;
}
