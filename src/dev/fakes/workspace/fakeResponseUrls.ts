/**
 * The `response_url` of a click, as Slack serves it (docs.slack.dev,
 * "Handling user interaction", responding with response_url): a URL the app
 * POSTs a message to, at most 5 times within 30 minutes. Here only which URL
 * is live and what it answers for; the fake applies the message.
 */
import { randomHex } from "../../../core/crypto/encoding.ts";

/** How many messages one response_url takes. */
export const RESPONSE_URL_USES = 5;
/** How long a response_url lives after the click. */
export const RESPONSE_URL_TTL_MS = 30 * 60 * 1000;
/** The path every response_url of the fake starts with (Slack's `https://hooks.slack.com/actions/…`). */
export const RESPONSE_URL_PATH = "/actions/";

/** What a response_url answers for: the click's workspace, channel and message. */
export interface ResponseUrlTarget {
  teamId: string;
  channel: string;
  messageTs: string;
}

export function createResponseUrls(now: () => number) {
  let issued = new Map<string, ResponseUrlTarget & { issuedAt: number; uses: number }>();
  let seq = 0;
  return {
    /** A new response_url on `origin` for a click on `target`. */
    issue(origin: string, target: ResponseUrlTarget): string {
      const path = `${RESPONSE_URL_PATH}${target.teamId}/${++seq}/${randomHex(12)}`;
      issued.set(path, { ...target, issuedAt: now(), uses: 0 });
      return origin + path;
    },
    /** Spends one use of the URL at `path`: its target, or Slack's error for it. */
    use(path: string): ResponseUrlTarget | { error: "expired_url" | "used_url" } {
      const entry = issued.get(path);
      if (!entry || now() - entry.issuedAt > RESPONSE_URL_TTL_MS) return { error: "expired_url" };
      if (entry.uses >= RESPONSE_URL_USES) return { error: "used_url" };
      entry.uses += 1;
      return { teamId: entry.teamId, channel: entry.channel, messageTs: entry.messageTs };
    },
    reset() {
      issued = new Map();
      seq = 0;
    },
  };
}
