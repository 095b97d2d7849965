/** One email the fake provider accepted, as its outbox shows it (what Resend keeps of `POST /emails`). */
export interface SentEmail {
  id: string;
  from: string;
  to: string[];
  subject: string;
  /** The HTML body; null for a text-only email. */
  html: string | null;
  /** The plain-text body, when one was sent. */
  text: string | null;
  cc: string[];
  bcc: string[];
  /** `reply_to` on the wire. */
  replyTo: string[];
  idempotencyKey: string | null;
  at: string;
}

/** An idempotency key's request: its body's hash and the id it sent (`ids`: a batch's, in order). */
export interface SeenKey {
  bodyHash: string;
  id: string;
  ids?: string[];
}

/** What the fake email provider keeps: the emails it accepted (its outbox) and the idempotency keys it saw. */
export interface FakeEmailStore {
  add(email: SentEmail): Promise<void>;
  /** Newest first, at most `limit`. */
  list(limit: number): Promise<SentEmail[]>;
  get(id: string): Promise<SentEmail | null>;
  findKey(key: string): Promise<SeenKey | null>;
  saveKey(key: string, seen: SeenKey): Promise<void>;
  clear(): Promise<void>;
}

/** The store of one fake instance's memory (tests; a worker without a KV namespace). */
export function memoryFakeEmailStore(): FakeEmailStore {
  const emails: SentEmail[] = [];
  const keys = new Map<string, SeenKey>();
  return {
    async add(email) {
      emails.push(email);
    },
    async list(limit) {
      return emails.slice(-limit).reverse();
    },
    async get(id) {
      return emails.find((email) => email.id === id) ?? null;
    },
    async findKey(key) {
      return keys.get(key) ?? null;
    },
    async saveKey(key, seen) {
      keys.set(key, seen);
    },
    async clear() {
      emails.length = 0;
      keys.clear();
    },
  };
}
