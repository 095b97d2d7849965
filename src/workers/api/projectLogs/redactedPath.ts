/**
 * A request's path and query as the project log shows them, with what looks
 * like a secret replaced by `REDACTED`: the rule the runtime applies to a
 * trace's URL (workerd's), minus its one mistake for this platform: a run id
 * (`<64 hex>.<12 base36>`, src/objects/runIds.ts) is the run's name, not a
 * credential, and stays readable (`GET /api/runs/<run id>`). The log reads
 * the unredacted URL and redacts it here, so both halves of the rule live in
 * one place with one table test.
 *
 * A "word" is a run of letters, digits, `-` and `_`. It is redacted when it
 * holds a hex id (32 or more hex digits in a row, dashes allowed: keys, hashes, UUIDs) or
 * a base64-like id (21 or more characters mixing upper case, lower case and
 * digits: tokens, API keys). A whole run id is kept; its 64-hex half alone,
 * or with any other suffix, is still a hex id and redacted.
 */
const RUN_ID = /(?<![A-Za-z0-9_-])[0-9a-f]{64}\.[a-z0-9]{12}(?![A-Za-z0-9_.-])/y;
const WORD = /[A-Za-z0-9_-]+/y;

function looksSecret(word: string): boolean {
  if (/[0-9a-fA-F]{32}/.test(word.replace(/-/g, ""))) return true;
  return word.length >= 21 && /[A-Z]/.test(word) && /[a-z]/.test(word) && /[0-9]/.test(word);
}

export function redactedPath(path: string): string {
  let out = "";
  let at = 0;
  while (at < path.length) {
    RUN_ID.lastIndex = at;
    const runId = RUN_ID.exec(path);
    if (runId) {
      out += runId[0];
      at += runId[0].length;
      continue;
    }
    WORD.lastIndex = at;
    const word = WORD.exec(path);
    if (word) {
      out += looksSecret(word[0]) ? "REDACTED" : word[0];
      at += word[0].length;
      continue;
    }
    out += path[at];
    at += 1;
  }
  return out;
}
