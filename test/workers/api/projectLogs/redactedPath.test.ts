import { describe, expect, it } from "vitest";
import { redactedPath } from "#src/workers/api/projectLogs/redactedPath.ts";

const HEX64 = "3f0a9c2b7d4e1f60a8b9c0d1e2f3a4b5c6d7e8f90a1b2c3d4e5f6a7b8c9d0e1f";
const RUN_ID = `${HEX64}.b8lf1wyit528`;

describe("redactedPath: what a request line shows", () => {
  it.each([
    ["a run id in the path", `/api/runs/${RUN_ID}`, `/api/runs/${RUN_ID}`],
    ["a run id in the query", `/status?run=${RUN_ID}&x=1`, `/status?run=${RUN_ID}&x=1`],
    ["a run id then a sub-path", `/runs/${RUN_ID}/events`, `/runs/${RUN_ID}/events`],
    ["plain words and numbers", "/api/hello?name=Ada&page=12", "/api/hello?name=Ada&page=12"],
    ["a short base36 word", "/b8lf1wyit528", "/b8lf1wyit528"],
  ])("keeps %s", (_what, path, shown) => {
    expect(redactedPath(path)).toBe(shown);
  });

  it.each([
    ["a 64-hex key alone", `/hook/${HEX64}`, "/hook/REDACTED"],
    ["a 32-hex key in the query", "/x?key=0123456789abcdef0123456789ABCDEF", "/x?key=REDACTED"],
    ["a UUID", "/reset/123e4567-e89b-12d3-a456-426614174000", "/reset/REDACTED"],
    ["a token mixing cases and digits", "/cb?token=ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7", "/cb?token=REDACTED"],
    // A JWT's short header ({"alg":"HS256"}) is no secret; its claims and signature are.
    [
      "a JWT's claims and signature",
      "/x?t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
      "/x?t=eyJhbGciOiJIUzI1NiJ9.REDACTED.REDACTED",
    ],
    // Shaped like a run id but not one: the hex half is still a key.
    ["64 hex with a longer suffix", `/k/${HEX64}.b8lf1wyit528x`, "/k/REDACTED.b8lf1wyit528x"],
    ["64 hex with an upper-case suffix", `/k/${HEX64}.B8LF1WYIT528`, "/k/REDACTED.B8LF1WYIT528"],
    ["65 hex then a suffix", `/k/a${HEX64}.b8lf1wyit528`, "/k/REDACTED.b8lf1wyit528"],
    ["a run id glued to a word", `/k/x${RUN_ID}`, "/k/REDACTED.b8lf1wyit528"],
  ])("redacts %s", (_what, path, shown) => {
    expect(redactedPath(path)).toBe(shown);
  });
});
