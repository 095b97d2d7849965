import { afterEach, describe, expect, it } from "vitest";
import { validateEmailMessage } from "#src/contracts/emailMessage.ts";
import type { LoginEnv } from "#src/workers/login/env.ts";
import type { ProviderMetadata } from "#src/workers/login/identityProvider.ts";
import { signedInUser } from "#src/workers/login/signedInUser.ts";
import { DEFAULT_SESSION_SECONDS } from "#src/contracts/signInSessions.ts";
import { setAuthSettings, validateAuthOptions } from "#src/runtime/auth/authSettings.ts";
import { sessionHolds } from "#src/runtime/auth/session.ts";

/**
 * One address rule (src/core/email.ts) for the login worker and the project
 * runtime: every row goes through the function each side actually calls (the
 * login worker's `signedInUser` on a verified ID token; the runtime's
 * `sessionHolds` under `auth.allow({ domains })`, which applies the same
 * check as the callback and the local form) and both must agree. Without a
 * domain list, `email.send`'s recipient check agrees too.
 */
const rows: [address: string, domains: string[] | null, accepted: boolean][] = [
  ["a@example.com", ["example.com"], true],
  ["a@EXAMPLE.COM", ["example.com"], true],
  ["A.B+tag@example.com", ["example.com"], true],
  ["o'brien@example.com", ["example.com"], true],
  ["a@kde.org", ["kde.org"], true],
  ["a@\u212Ade.org", ["kde.org"], false], // KELVIN SIGN lower-cases to "k"
  ["a@\u212Ade.org", null, false],
  ["\u212A@kde.org", ["kde.org"], false],
  ["a@xn--bcher-kva.example", ["xn--bcher-kva.example"], true],
  ["a@bücher.example", ["xn--bcher-kva.example"], false],
  ["a@bücher.example", null, false],
  ["a..b@example.com", ["example.com"], false],
  ["a..b@example.com", null, false],
  [".a@example.com", null, false],
  ["a.@example.com", null, false],
  ["a@example..com", null, false],
  ["a@.example.com", null, false],
  ["a@example.com.", null, false],
  ["a@-example.com", null, false],
  ["a@example-.com", null, false],
  ["a@exam_ple.com", null, false],
  ["a@example", null, false],
  ["a@1.2.3.4", null, false],
  ["a@[127.0.0.1]", null, false],
  ['"a@b"@example.com', null, false],
  ["a@b@example.com", null, false],
  ["@example.com", null, false],
  ["a@", null, false],
  ["a b@example.com", null, false],
  ["a\u00a0b@example.com", null, false],
  ["a@example.com\n", null, false],
  ["<a@example.com>", null, false],
  ["Ada <a@example.com>", null, false],
  ["a@example.com,b@example.com", null, false],
  [`${"a".repeat(65)}@example.com`, null, false],
  [`${"a".repeat(64)}@example.com`, null, true],
  [`a@${"b".repeat(64)}.com`, null, false],
  ["a@example.com.evil.io", ["example.com"], false],
  ["a@sub.example.com", ["example.com"], false],
  ["a@xexample.com", ["example.com"], false],
  ["a@example.com", null, true],
];

const metadata = {
  issuer: "https://idp.test",
  authorization_endpoint: "",
  token_endpoint: "",
  jwks_uri: "",
} satisfies ProviderMetadata;
const backLink = { href: "https://project.test/", text: "Back" };

async function loginAccepts(email: string, domains: string[] | null): Promise<boolean> {
  const project = { id: 7, slug: "shop", private: false, workerSecret: "s".repeat(32), domains };
  try {
    await signedInUser({} as LoginEnv, metadata, project, {
      idClaims: { sub: "u1", email, email_verified: true },
      accessToken: undefined,
      backLink,
    });
    return true;
  } catch {
    return false;
  }
}

function runtimeAccepts(email: string, domains: string[] | null): boolean {
  setAuthSettings(validateAuthOptions(domains ? { domains } : undefined));
  const now = 1_700_000_000_000;
  const iat = Math.floor(now / 1000);
  return sessionHolds({ pid: 7, email, name: "n", iat, exp: iat + 60, sid: "s" }, 7, now);
}

function emailSendAccepts(address: string): boolean {
  try {
    validateEmailMessage({ to: address, subject: "s", html: "h" });
    return true;
  } catch {
    return false;
  }
}

describe("one email rule for the login worker and the project runtime", () => {
  afterEach(() => setAuthSettings({ domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS }));

  it.each(rows)("%j with domains %j → accepted %s", async (address, domains, accepted) => {
    const outcomes = { login: await loginAccepts(address, domains), runtime: runtimeAccepts(address, domains) };
    expect(outcomes).toEqual({ login: accepted, runtime: accepted });
    if (domains === null) expect(emailSendAccepts(address)).toBe(accepted);
  });

  it("refuses a look-alike domain in auth.allow() instead of folding it", () => {
    expect(() => validateAuthOptions({ domains: ["\u212Ade.org"] })).toThrow(/not a bare domain/);
    expect(validateAuthOptions({ domains: ["KDE.org"] }).domains).toEqual(["kde.org"]);
  });
});
