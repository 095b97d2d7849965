import { describe, expect, it } from "vitest";
import { isSafeRedirectPath, safeRedirectPath } from "#src/core/web/redirectPath.ts";

// The login worker (`isSafeRedirectPath` on /start) and the project runtime
// (`safeRedirectPath`) share the rule; these rows pin where the two copies
// used to disagree (the login worker accepted U+00A0 and other Unicode spaces).
describe("redirect paths: one rule for the login worker and the runtime", () => {
  const rows: [string, boolean][] = [
    ["/", true],
    ["/dash?tab=1#x", true],
    ["/orders?q=a%20b", true],
    ["/a\u00a0b", false],
    ["/\u00a0", false],
    ["/a%C2%A0b", false],
    ["/a\u2003b", false],
    ["/a%E2%80%83b", false],
    ["/a\u3000b", false],
    ["/a\ufeffb", false],
    ["/a\u2028b", false],
    ["/a\tb", false],
    ["/x y", false],
    ["//evil.example", false],
    ["/%2F%2Fevil.example", false],
    ["/\\evil.example", false],
    ["/a/%2e%2e/b", false],
  ];
  it.each(rows)("%j → %s", (raw, safe) => {
    expect(isSafeRedirectPath(raw)).toBe(safe);
    expect(safeRedirectPath(raw) !== null).toBe(safe);
  });
});
