import { describe, expect, it } from "vitest";
import { verifyCallbackToken, bindingHash } from "#src/core/callbackToken.ts";
import { base64url } from "#src/core/crypto/encoding.ts";
import { openFlowCookie, type FlowState } from "#src/workers/login/flowCookie.ts";
import { csrfTokenValid } from "#src/runtime/auth/csrfToken.ts";
import { openSession } from "#src/runtime/auth/sessionSeal.ts";
import { hkdfWrittenOut } from "#test/support/crypto/hkdfWrittenOut.ts";

/**
 * Values written by the code before core/crypto (same keys, same layouts,
 * written out here with WebCrypto) must still open: session cookies, flow
 * cookies and callback tokens live in browsers across a deploy.
 */
const encoder = new TextEncoder();
const SECRET = "w".repeat(40);

describe("deployed wire formats stay readable", () => {
  it("a session cookie: v1.<iv‖ciphertext‖tag>, additional data platform-session-v1", async () => {
    const record = { pid: 3, email: "a@example.com", name: "A", iat: 1, exp: 2, sid: "s" };
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: "AES-GCM", iv, additionalData: encoder.encode("platform-session-v1") },
        await hkdfWrittenOut(SECRET, "platform-session-v1", "AES-GCM"),
        encoder.encode(JSON.stringify(record)),
      ),
    );
    expect(await openSession(SECRET, `v1.${base64url(new Uint8Array([...iv, ...ct]))}`)).toEqual(record);
  });

  it("a login flow cookie: <iv>.<ciphertext>, additional data the cookie's name", async () => {
    const flow: FlowState = {
      state: "s",
      nonce: "n",
      verifier: "v",
      slug: "shop",
      redirect: "/",
      bind: "b",
      exp: 2_000_000_000,
    };
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: encoder.encode("__Host-login_flow") },
      await hkdfWrittenOut(SECRET, "platform-login-flow-cookie-v1", "AES-GCM"),
      encoder.encode(JSON.stringify(flow)),
    );
    const request = new Request("https://login.test/callback", {
      headers: { cookie: `__Host-login_flow=${base64url(iv)}.${base64url(ct)}` },
    });
    expect(await openFlowCookie(request, SECRET, "https://login.test", 1_000)).toEqual({ ok: true, flow });
  });

  it("a callback token and a CSRF token", async () => {
    const claims = {
      pid: 3,
      email: "a@example.com",
      name: "A",
      bnd: await bindingHash("bind"),
      rdr: "/",
      iat: 1,
      exp: 2_000_000_000,
      // A token id as the login worker writes them (16 random bytes, base64url).
      jti: "AAECAwQFBgcICQoLDA0ODw",
    };
    const payload = base64url(encoder.encode(JSON.stringify(claims)));
    const sig = await crypto.subtle.sign(
      "HMAC",
      await hkdfWrittenOut(SECRET, "platform-callback-token-v1", "HMAC"),
      encoder.encode(`v1.${payload}`),
    );
    expect(
      await verifyCallbackToken(
        `v1.${payload}.${base64url(sig)}`,
        { workerSecret: SECRET, projectId: 3, bindingCookieValue: "bind" },
        1_000,
      ),
    ).toEqual({
      ok: true,
      claims,
    });

    const nonce = base64url(crypto.getRandomValues(new Uint8Array(32)));
    const csrf = base64url(
      await crypto.subtle.sign(
        "HMAC",
        await hkdfWrittenOut(SECRET, "platform-signin-csrf-v1", "HMAC"),
        encoder.encode(nonce),
      ),
    );
    expect(await csrfTokenValid(SECRET, nonce, csrf)).toBe(true);
  });
});
