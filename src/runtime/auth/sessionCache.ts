/**
 * What this isolate last learned about each session from the platform's
 * records, so that `auth.user()` asks the platform about a session at most
 * once per `SESSION_RECHECK_MS` (per isolate) and otherwise costs one `Map`
 * lookup. The bound this sets, and the README promises:
 *
 * - a sign-out or sign-out-everywhere handled by this isolate takes effect
 *   here at once (`end`, `endUser`);
 * - in every other isolate, within `SESSION_RECHECK_MS` (30 s) of the
 *   platform's record changing: an answer older than that is asked again.
 *
 * Answers "not active" are kept for the same time, no longer, so a session
 * recorded a moment after another isolate's first look is not shut out for
 * good. Concurrent first looks at one session share one question. At most
 * `maxEntries` sessions are remembered (the oldest answer goes first). Pure:
 * the clock is the caller's `nowMS`.
 */
export const SESSION_RECHECK_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Answer {
  active: boolean;
  atMS: number;
  /** Order of recording: an answer that arrives after a newer one was recorded is dropped. */
  seq: number;
  /** The session's address, lower-cased: what `endUser` matches. */
  user: string;
}

export class SessionCache {
  readonly #answers = new Map<string, Answer>();
  readonly #asking = new Map<string, Promise<boolean>>();
  /** When (in `seq`) each user was last signed out everywhere here, for questions in flight at that moment. */
  readonly #usersEnded = new Map<string, number>();
  readonly #maxEntries: number;
  #seq = 0;

  constructor(maxEntries = MAX_ENTRIES) {
    this.#maxEntries = maxEntries;
  }

  /**
   * Whether session `key` of `email` is active: the answer from the last
   * `SESSION_RECHECK_MS`, else `ask()`'s (remembered when it comes; a failed
   * question is not remembered, and rejects).
   */
  isActive(key: string, email: string, nowMS: number, ask: () => Promise<boolean>): Promise<boolean> | boolean {
    const known = this.#answers.get(key);
    if (known && nowMS - known.atMS < SESSION_RECHECK_MS && nowMS >= known.atMS) return known.active;
    const pending = this.#asking.get(key);
    if (pending) return pending;
    const askedAt = this.#seq;
    const question = ask()
      .then((active) => {
        // Ended here while the platform was being asked: the local answer is the newer one.
        const newer = this.#answers.get(key);
        if (newer && newer.seq > askedAt) return newer.active;
        const answer = active && !((this.#usersEnded.get(email.toLowerCase()) ?? -1) > askedAt);
        this.remember(key, email, answer, nowMS);
        return answer;
      })
      .finally(() => this.#asking.delete(key));
    this.#asking.set(key, question);
    return question;
  }

  /** Records an answer learned here (a session just started, or just ended). */
  remember(key: string, email: string, active: boolean, nowMS: number): void {
    this.#answers.delete(key);
    this.#answers.set(key, { active, atMS: nowMS, seq: ++this.#seq, user: email.toLowerCase() });
    if (this.#answers.size > this.#maxEntries) this.#answers.delete(this.#answers.keys().next().value!);
  }

  /** Sign-out in this isolate: these sessions read as ended here at once. */
  end(keys: readonly { key: string; email: string }[], nowMS: number): void {
    for (const { key, email } of keys) this.remember(key, email, false, nowMS);
  }

  /** Sign-out-everywhere in this isolate: every session of `email` known here reads as ended at once. */
  endUser(email: string, nowMS: number): void {
    const user = email.toLowerCase();
    const keys = [...this.#answers].filter(([, answer]) => answer.user === user).map(([key]) => key);
    for (const key of keys) this.remember(key, user, false, nowMS);
    if (this.#usersEnded.size >= this.#maxEntries) this.#usersEnded.clear();
    this.#usersEnded.set(user, ++this.#seq);
  }
}

/** This isolate's cache (one per worker isolate; per process under `platform dev --node`). */
export const isolateSessions = new SessionCache();
