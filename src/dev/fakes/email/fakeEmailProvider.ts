/**
 * A local stand-in for the email provider (Resend's wire protocol) for
 * `platform dev` and tests: `POST /emails`, `POST /emails/batch` (1..100
 * emails, all checked before any is sent; answers `{ data: [{ id }] }`) and
 * `GET /emails/{id}` (the email object; 404 `not_found` for one it did not
 * send). It checks what it receives like the real one:
 * the Bearer key, JSON, `from` / `to` (1..50) / `subject`, an `html` or a
 * `text` body (either alone, or both), `cc` / `bcc` / `reply_to` (an address
 * or a list), and `Idempotency-Key` (same key + same body → the same id,
 * nothing resent; same key + another body → 409 `invalid_idempotent_request`).
 * It keeps every field it accepted (text, cc, bcc, reply_to too), as Resend
 * does.
 *
 * The local outbox (`platform email list`, the console's Outbox): `GET
 * /__fake/outbox[?from=<address>&limit=N]` (newest first, at most 100 unless
 * `limit` says up to 1000; `from` keeps one sender's) and `GET
 * /__fake/outbox/<id>`. Test routes: `GET /__fake/sent` (what was accepted,
 * oldest first), `DELETE /__fake/sent` (forget it), `POST /__fake/fail-next`
 * `{ status, name, message, retryAfter? }` (the next `POST /emails` answers
 * that error). What was accepted lives in `store` (KV under `platform dev`).
 */
import { hex } from "../../../core/crypto/encoding.ts";
import { type FakeEmailStore, memoryFakeEmailStore, type SentEmail } from "./fakeEmailStore.ts";

export interface FakeEmailProvider {
  fetch(request: Request): Promise<Response>;
  /** Emails this instance accepted, in order (tests; the outbox is `store`). */
  sent: SentEmail[];
  /** Every `POST /emails` and `POST /emails/batch` the fake received, accepted or not. */
  requests: { headers: Record<string, string>; body: string }[];
}

const ADDRESS = /^[^\s<>@",]+@[^\s<>@",]+\.[^\s<>@",]+$/;
/** The outbox's own ids are UUIDs (`crypto.randomUUID`). */
export const EMAIL_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const OUTBOX_LIMIT = { default: 100, max: 1000 };
/** Resend sends at most this many emails in one `POST /emails/batch`. */
const BATCH_MAX = 100;

/** The address of a `from` (`Name <a@b.c>` or `a@b.c`), lower-cased. */
export function senderAddress(from: string): string {
  return (/<([^>]+)>$/.exec(from)?.[1] ?? from).toLowerCase();
}

/** `cc`, `bcc` or `reply_to`: absent, an address or a list of them (`Name <a@b.c>` too); null when invalid. */
function addressList(value: unknown): string[] | null {
  if (value === undefined || value === null) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list) || list.length > 50) return null;
  return list.every((a) => typeof a === "string" && ADDRESS.test(senderAddress(a))) ? (list as string[]) : null;
}

function providerError(
  statusCode: number,
  name: string,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return Response.json({ statusCode, name, message }, { status: statusCode, headers });
}

/** What one email of a request asks for, checked: a `SentEmail` once it has an id and a time. */
type EmailFields = Omit<SentEmail, "id" | "idempotencyKey" | "at">;

/** Checks one email object as Resend does (`POST /emails`, each item of `POST /emails/batch`). */
function emailFields(json: unknown): EmailFields | Response {
  if (typeof json !== "object" || json === null || Array.isArray(json))
    return providerError(422, "validation_error", "Body must be an object.");
  const fields = json as Record<string, unknown>;
  for (const field of ["from", "to", "subject"]) {
    if (fields[field] === undefined) return providerError(422, "missing_required_field", `Missing \`${field}\` field.`);
  }
  const from = fields.from;
  const fromAddress = typeof from === "string" ? senderAddress(from) : "";
  if (!ADDRESS.test(fromAddress)) return providerError(422, "validation_error", "Invalid `from` field.");
  const to = typeof fields.to === "string" ? [fields.to] : fields.to;
  if (!Array.isArray(to) || to.length === 0 || to.some((a) => typeof a !== "string" || !ADDRESS.test(a))) {
    return providerError(422, "validation_error", "Invalid `to` field.");
  }
  if (to.length > 50) return providerError(422, "validation_error", "Too many recipients: `to` accepts at most 50.");
  if (typeof fields.subject !== "string" || !fields.subject)
    return providerError(422, "validation_error", "Invalid `subject` field.");
  for (const field of ["html", "text"]) {
    if (fields[field] !== undefined && typeof fields[field] !== "string")
      return providerError(422, "validation_error", `Invalid \`${field}\` field.`);
  }
  if (typeof fields.html !== "string" && typeof fields.text !== "string") {
    return providerError(422, "validation_error", "Either `html` or `text` must be provided.");
  }
  const copies: Record<"cc" | "bcc" | "reply_to", string[]> = { cc: [], bcc: [], reply_to: [] };
  for (const field of ["cc", "bcc", "reply_to"] as const) {
    const list = addressList(fields[field]);
    if (list === null) return providerError(422, "validation_error", `Invalid \`${field}\` field.`);
    copies[field] = list;
  }
  return {
    from: from as string,
    to: to as string[],
    subject: fields.subject,
    html: typeof fields.html === "string" ? fields.html : null,
    text: typeof fields.text === "string" ? fields.text : null,
    cc: copies.cc,
    bcc: copies.bcc,
    replyTo: copies.reply_to,
  };
}

/** An email as `GET /emails/{id}` answers it (Resend's email object). */
function emailObject(email: SentEmail): Record<string, unknown> {
  return {
    object: "email",
    id: email.id,
    from: email.from,
    to: email.to,
    subject: email.subject,
    html: email.html,
    text: email.text,
    cc: email.cc,
    bcc: email.bcc,
    reply_to: email.replyTo,
    created_at: email.at,
    scheduled_at: null,
    last_event: "delivered",
  };
}

export function createFakeEmailProvider(options: {
  apiKey: string;
  store?: FakeEmailStore;
  now?: () => number;
}): FakeEmailProvider {
  const store = options.store ?? memoryFakeEmailStore();
  const now = options.now ?? Date.now;
  const sent: SentEmail[] = [];
  const requests: FakeEmailProvider["requests"] = [];
  let failNext: { status: number; name: string; message: string; retryAfter?: number } | null = null;

  /** The Bearer key Resend demands on every API call; null when it is the fake's. */
  function unauthorized(request: Request): Response | null {
    const auth = request.headers.get("authorization");
    if (!auth) return providerError(401, "missing_api_key", "Missing API key in the authorization header.");
    if (auth !== `Bearer ${options.apiKey}`) return providerError(403, "invalid_api_key", "API key is invalid.");
    return null;
  }

  /**
   * `POST /emails` (one object) or `POST /emails/batch` (an array of 1..100): every email is checked before
   * any is kept, and `Idempotency-Key` answers a repeat with the same ids.
   */
  async function send(request: Request, batch: boolean): Promise<Response> {
    const body = await request.text();
    requests.push({ headers: Object.fromEntries(request.headers), body });
    const refused = unauthorized(request);
    if (refused) return refused;
    if (!/^application\/json\b/i.test(request.headers.get("content-type") ?? "")) {
      return providerError(422, "validation_error", "Content-Type must be application/json.");
    }
    if (failNext) {
      const f = failNext;
      failNext = null;
      return providerError(f.status, f.name, f.message, f.retryAfter ? { "retry-after": String(f.retryAfter) } : {});
    }
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      return providerError(422, "validation_error", "Body is not valid JSON.");
    }
    if (batch && (!Array.isArray(json) || json.length < 1 || json.length > BATCH_MAX))
      return providerError(422, "validation_error", `A batch is an array of 1 to ${BATCH_MAX} emails.`);
    const items = batch ? (json as unknown[]) : [json];
    const checked: EmailFields[] = [];
    for (const [i, item] of items.entries()) {
      const fields = emailFields(item);
      if (fields instanceof Response) {
        if (!batch) return fields;
        const { statusCode, name, message } = (await fields.json()) as {
          statusCode: number;
          name: string;
          message: string;
        };
        return providerError(statusCode, name, `emails[${i}]: ${message}`);
      }
      checked.push(fields);
    }

    const key = request.headers.get("idempotency-key");
    if (key !== null && (key.length < 1 || key.length > 256)) {
      return providerError(400, "invalid_idempotency_key", "The key must be between 1-256 chars.");
    }
    const answer = (ids: string[]) => Response.json(batch ? { data: ids.map((id) => ({ id })) } : { id: ids[0] });
    const bodyHash = hex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)));
    if (key !== null) {
      const seen = await store.findKey(key);
      if (seen && seen.bodyHash !== bodyHash) {
        return providerError(
          409,
          "invalid_idempotent_request",
          "Same idempotency key used with a different request payload.",
        );
      }
      if (seen) return answer(seen.ids ?? [seen.id]);
    }
    const at = new Date(now()).toISOString();
    const emails: SentEmail[] = checked.map((fields) => ({
      id: crypto.randomUUID(),
      ...fields,
      idempotencyKey: key,
      at,
    }));
    const ids = emails.map((email) => email.id);
    if (key !== null) await store.saveKey(key, { bodyHash, id: ids[0]!, ...(batch ? { ids } : {}) });
    for (const email of emails) {
      await store.add(email);
      sent.push(email);
    }
    return answer(ids);
  }

  /** `GET /emails/{id}`: an email this key sent, as Resend's email object. */
  async function retrieveEmail(request: Request, id: string): Promise<Response> {
    const refused = unauthorized(request);
    if (refused) return refused;
    const email = EMAIL_ID.test(id) ? await store.get(id) : null;
    return email ? Response.json(emailObject(email)) : providerError(404, "not_found", "Email not found");
  }

  async function listOutbox(url: URL): Promise<Response> {
    const limitParam = url.searchParams.get("limit");
    const limit = limitParam === null ? OUTBOX_LIMIT.default : Number(limitParam);
    if (!Number.isInteger(limit) || limit < 1 || limit > OUTBOX_LIMIT.max)
      return providerError(422, "validation_error", `limit must be 1–${OUTBOX_LIMIT.max}.`);
    const from = url.searchParams.get("from")?.toLowerCase();
    const emails = (await store.list(OUTBOX_LIMIT.max)).filter((e) => !from || senderAddress(e.from) === from);
    return Response.json({ emails: emails.slice(0, limit) });
  }

  async function showEmail(id: string): Promise<Response> {
    const email = EMAIL_ID.test(id) ? await store.get(id) : null;
    return email ? Response.json({ email }) : providerError(404, "not_found", "No such email in the outbox.");
  }

  return {
    sent,
    requests,
    async fetch(request) {
      const url = new URL(request.url);
      const { pathname } = url;
      if (pathname === "/emails" && request.method === "POST") return send(request, false);
      if (pathname === "/emails/batch" && request.method === "POST") return send(request, true);
      if (pathname.startsWith("/emails/") && request.method === "GET")
        return retrieveEmail(request, decodeURIComponent(pathname.slice("/emails/".length)));
      if (pathname === "/__fake/outbox" && request.method === "GET") return listOutbox(url);
      if (pathname.startsWith("/__fake/outbox/") && request.method === "GET")
        return showEmail(pathname.slice("/__fake/outbox/".length));
      if (pathname === "/__fake/sent" && request.method === "GET")
        return Response.json({ sent: (await store.list(OUTBOX_LIMIT.max)).reverse() });
      if (pathname === "/__fake/sent" && request.method === "DELETE") {
        sent.length = 0;
        requests.length = 0;
        await store.clear();
        return new Response(null, { status: 204 });
      }
      if (pathname === "/__fake/fail-next" && request.method === "POST") {
        failNext = (await request.json()) as typeof failNext;
        return new Response(null, { status: 204 });
      }
      return providerError(404, "not_found", "The requested endpoint does not exist.");
    },
  };
}
