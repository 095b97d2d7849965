import { hex } from "../../../core/crypto/encoding.ts";
import type { FakeEmailStore, SentEmail } from "./fakeEmailStore.ts";

/**
 * The fake's store in a KV namespace, so the local outbox outlives the
 * worker's isolate: `platform dev` restarts workerd at every rebuild, and
 * Miniflare keeps KV on disk under `.platform/state/`, so the outbox also
 * survives restarts of `platform dev` while that folder is kept.
 *
 *   email/<id>                       the email (JSON)
 *   outbox/<inverted ms>/<id>        index, newest first in KV's key order
 *   key/<sha-256 of the key>         an Idempotency-Key's body hash and id
 */
const LATEST_MS = 10 ** 15;

function outboxKey(email: SentEmail): string {
  const inverted = String(LATEST_MS - Date.parse(email.at)).padStart(16, "0");
  return `outbox/${inverted}/${email.id}`;
}

async function idempotencyKey(key: string): Promise<string> {
  return `key/${hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key)))}`;
}

export function kvFakeEmailStore(kv: KVNamespace): FakeEmailStore {
  const get = (id: string) => kv.get<SentEmail>(`email/${id}`, "json");
  return {
    async add(email) {
      await kv.put(`email/${email.id}`, JSON.stringify(email));
      await kv.put(outboxKey(email), "");
    },
    async list(limit) {
      const { keys } = await kv.list({ prefix: "outbox/", limit });
      const emails = await Promise.all(keys.map((k) => get(k.name.slice(k.name.lastIndexOf("/") + 1))));
      return emails.filter((email): email is SentEmail => email !== null);
    },
    get,
    async findKey(key) {
      return kv.get(await idempotencyKey(key), "json");
    },
    async saveKey(key, seen) {
      await kv.put(await idempotencyKey(key), JSON.stringify(seen));
    },
    async clear() {
      let cursor: string | undefined;
      do {
        const page = await kv.list(cursor ? { cursor } : {});
        await Promise.all(page.keys.map((k) => kv.delete(k.name)));
        cursor = page.list_complete ? undefined : page.cursor;
      } while (cursor);
    },
  };
}
