import { generateKeyPair } from "jose";
import { beforeEach, describe, expect, it } from "vitest";
import { verifyCallbackToken } from "#src/core/callbackToken.ts";
import { sealFlowCookie } from "#src/workers/login/flowCookie.ts";
import { resetIdentityProviderCache } from "#src/workers/login/identityProvider.ts";
import {
  ADA,
  browserBinding,
  callLogin,
  cookiePair,
  expectLoginRefusal,
  fakeIdentityProvider,
  FLOW_SECRET,
  ISSUER,
  LOGIN_WORKER_URL,
  loginEnv,
  projectWithAuth,
  signInAtLoginWorker,
  startPath,
  type IdTokenTweaks,
  type IdpUser,
} from "#test/support/workerd/index.ts";

beforeEach(() => resetIdentityProviderCache());

/** A refusal: an HTML page with `status`, no redirect, the flow cookie cleared, and nothing that looks like a token. */
async function expectRefused(response: Response, status: number, pattern: RegExp): Promise<void> {
  const html = await expectLoginRefusal(response, status, pattern);
  expect(response.headers.get("set-cookie")).toMatch(
    /^__Host-login_flow=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax; Secure$/,
  );
  expect(response.headers.get("cache-control")).toBe("no-store");
  expect(html).not.toMatch(/v1\.[A-Za-z0-9_-]{20,}\./);
}

/** The login worker's hand-over page: the form's action and its hidden token (the page's HTML, unescaped). */
async function formOf(response: Response): Promise<{ action: string; token: string; html: string }> {
  const html = await response.clone().text();
  const action = /<form id="callback" method="post" action="([^"]+)">/.exec(html)?.[1];
  const token = /<input type="hidden" name="token" value="([^"]+)">/.exec(html)?.[1];
  expect(action && token, html).toBeTruthy();
  return { action: action!.replaceAll("&amp;", "&"), token: token!, html };
}

async function tokenFrom(response: Response): Promise<string> {
  return (await formOf(response)).token;
}

/** A browser signs `user` (ada by default) in to "shop" (its auth settings `auth`) at the login worker and the fake provider. */
async function signInToShop(
  auth: Parameters<typeof projectWithAuth>[1] = {},
  input: { user?: IdpUser; tweaks?: IdTokenTweaks } = {},
) {
  const idp = await fakeIdentityProvider();
  const shop = await projectWithAuth("shop", auth);
  const binding = await browserBinding();
  const { callback } = await signInAtLoginWorker(idp, loginEnv(idp), {
    slug: "shop",
    bind: binding.hash,
    user: input.user ?? ADA,
    tweaks: input.tweaks,
  });
  return { idp, shop, binding, callback };
}

describe("GET /callback: a successful sign-in hands the token over in a POST form", () => {
  it("answers with a page that POSTs to the public project's callback a token the project verifies with its secret and binding cookie", async () => {
    const idp = await fakeIdentityProvider();
    const shop = await projectWithAuth("shop", { domains: ["example.com"] });
    const blog = await projectWithAuth("blog", {}, { owner: "other@example.net" });
    const binding = await browserBinding();
    const { callback } = await signInAtLoginWorker(idp, loginEnv(idp), {
      slug: "shop",
      bind: binding.hash,
      redirect: "/orders?tab=open",
      user: { ...ADA, picture: "https://idp.example.test/ada.png" },
    });

    expect(callback.status, await callback.clone().text()).toBe(200);
    expect(callback.headers.get("referrer-policy")).toBe("no-referrer");
    expect(callback.headers.get("cache-control")).toBe("no-store");
    expect(callback.headers.get("x-frame-options")).toBe("DENY");
    expect(callback.headers.get("set-cookie")).toMatch(/^__Host-login_flow=; Path=\/; Max-Age=0;/);
    // No redirect and no token in any URL: a page whose form POSTs the token to the project.
    expect(callback.headers.get("location")).toBeNull();
    const form = await formOf(callback);
    expect(form.action).toBe("https://shop.example.test/api/auth/callback");
    expect(form.html).toMatch(/<form id="callback" method="post"/);
    for (const url of form.html.match(/(?:href|src|action)="[^"]*"/g) ?? []) expect(url).not.toContain(form.token);
    // The CSP lets the page submit to that one address, run only its own nonce'd script and show its empty icon
    // (the browser then asks for no /favicon.ico, which would be a 404).
    const csp = callback.headers.get("content-security-policy")!;
    const nonce = /<script nonce="([A-Za-z0-9_-]+)">/.exec(form.html)?.[1];
    expect(csp).toBe(
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'unsafe-inline'; img-src data:; form-action https://shop.example.test/api/auth/callback; frame-ancestors 'none'; base-uri 'none'`,
    );
    expect(form.html).toContain('<link rel="icon" href="data:,">');

    const token = await tokenFrom(callback);
    const check = await verifyCallbackToken(token, {
      workerSecret: shop.secret,
      projectId: shop.id,
      bindingCookieValue: binding.value,
    });
    expect(check.ok).toBe(true);
    if (!check.ok) return;
    expect(check.claims).toMatchObject({
      pid: shop.id,
      email: "ada@example.com",
      name: "Ada Lovelace",
      picture: "https://idp.example.test/ada.png",
      bnd: binding.hash,
      rdr: "/orders?tab=open",
    });
    expect(check.claims.exp - check.claims.iat).toBe(120);

    // Worthless anywhere else: another project's secret, another project id, another browser.
    expect(
      await verifyCallbackToken(token, {
        workerSecret: blog.secret,
        projectId: blog.id,
        bindingCookieValue: binding.value,
      }),
    ).toEqual({
      ok: false,
      reason: "bad_signature",
    });
    expect(
      await verifyCallbackToken(token, {
        workerSecret: shop.secret,
        projectId: blog.id,
        bindingCookieValue: binding.value,
      }),
    ).toEqual({
      ok: false,
      reason: "wrong_project",
    });
    expect(
      await verifyCallbackToken(token, {
        workerSecret: shop.secret,
        projectId: shop.id,
        bindingCookieValue: (await browserBinding()).value,
      }),
    ).toEqual({
      ok: false,
      reason: "wrong_browser",
    });
    expect(
      await verifyCallbackToken(token, { workerSecret: shop.secret, projectId: shop.id, bindingCookieValue: null }),
    ).toEqual({
      ok: false,
      reason: "wrong_browser",
    });
  });

  it("sends a private project's browser to <domain>/<slug>/api/auth/callback", async () => {
    const idp = await fakeIdentityProvider();
    const secret = await projectWithAuth("vault", {}, { private: true });
    const binding = await browserBinding();
    const { callback } = await signInAtLoginWorker(idp, loginEnv(idp), {
      slug: "vault",
      bind: binding.hash,
      user: ADA,
    });
    expect(callback.status).toBe(200);
    expect((await formOf(callback)).action).toBe("https://example.test/vault/api/auth/callback");
    expect(
      (
        await verifyCallbackToken(await tokenFrom(callback), {
          workerSecret: secret.secret,
          projectId: secret.id,
          bindingCookieValue: binding.value,
        })
      ).ok,
    ).toBe(true);
  });

  it.each([
    [false, "http://shop.localhost:8895/api/auth/callback"],
    [true, "http://localhost:8895/shop/api/auth/callback"],
  ])("with PROJECTS_BASE_URL (local development), private=%s returns to %s", async (isPrivate, expected) => {
    const idp = await fakeIdentityProvider();
    await projectWithAuth("shop", {}, { private: isPrivate });
    const binding = await browserBinding();
    const e = loginEnv(idp, { PROJECTS_BASE_URL: "http://localhost:8895", LOGIN_PUBLIC_URL: "http://127.0.0.1:9999" });
    const { callback } = await signInAtLoginWorker(idp, e, { slug: "shop", bind: binding.hash, user: ADA });
    expect((await formOf(callback)).action).toBe(expected);
    expect(callback.headers.get("set-cookie")).toBe("login_flow=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax");
  });

  it("falls back to the email's local part for the name and leaves a non-http picture out", async () => {
    const idp = await fakeIdentityProvider();
    const shop = await projectWithAuth("shop");
    const binding = await browserBinding();
    const user: IdpUser = {
      sub: "g-7",
      email: "grace@example.com",
      email_verified: true,
      name: "  ",
      picture: "javascript:alert(1)",
    };
    const { callback } = await signInAtLoginWorker(idp, loginEnv(idp), { slug: "shop", bind: binding.hash, user });
    const check = await verifyCallbackToken(await tokenFrom(callback), {
      workerSecret: shop.secret,
      projectId: shop.id,
      bindingCookieValue: binding.value,
    });
    expect(check.ok && check.claims.name).toBe("grace");
    expect(check.ok && "picture" in check.claims).toBe(false);
  });

  it("reads email and email_verified from userinfo when the ID token has only sub", async () => {
    const { idp, shop, binding, callback } = await signInToShop({}, { tweaks: { claimsInUserinfoOnly: true } });
    expect(callback.status, await callback.clone().text()).toBe(200);
    const check = await verifyCallbackToken(await tokenFrom(callback), {
      workerSecret: shop.secret,
      projectId: shop.id,
      bindingCookieValue: binding.value,
    });
    expect(check.ok && check.claims.email).toBe("ada@example.com");
    expect(idp.log).toContain("GET /userinfo");
  });

  it("refuses a userinfo answer about another account", async () => {
    const { callback } = await signInToShop(
      {},
      { tweaks: { claimsInUserinfoOnly: true, userinfoSub: "someone-else" } },
    );
    await expectRefused(callback, 502, /about another account/);
  });

  it("picks up a rotated signing key", async () => {
    const idp = await fakeIdentityProvider();
    const shop = await projectWithAuth("shop");
    const binding = await browserBinding();
    const first = await signInAtLoginWorker(idp, loginEnv(idp), { slug: "shop", bind: binding.hash, user: ADA });
    expect(first.callback.status).toBe(200);
    await idp.rotateKey();
    const second = await signInAtLoginWorker(idp, loginEnv(idp), { slug: "shop", bind: binding.hash, user: ADA });
    expect(second.callback.status, await second.callback.clone().text()).toBe(200);
    expect(
      (
        await verifyCallbackToken(await tokenFrom(second.callback), {
          workerSecret: shop.secret,
          projectId: shop.id,
          bindingCookieValue: binding.value,
        })
      ).ok,
    ).toBe(true);
    expect(idp.log.filter((l) => l === "GET /jwks")).toHaveLength(2);
  });

  it("sends a person who declined at the provider back to their page with auth_error=cancelled and no token", async () => {
    const idp = await fakeIdentityProvider();
    await projectWithAuth("vault", {}, { private: true });
    const binding = await browserBinding();
    const e = loginEnv(idp);
    const start = await callLogin(await startPath({ project: "vault", redirect: "/notes?x=1", bind: binding.hash }), e);
    const state = new URL(start.headers.get("location")!).searchParams.get("state")!;
    const response = await callLogin(`/callback?error=access_denied&state=${state}`, e, {
      cookie: cookiePair(start.headers.get("set-cookie")),
    });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("https://example.test/vault/notes?x=1&auth_error=cancelled");
    expect(idp.tokenRequests).toBe(0);
  });
});

describe("GET /callback: refusals mint nothing", () => {
  async function started(options: { loginEnvOverrides?: Parameters<typeof loginEnv>[1] } = {}) {
    const idp = await fakeIdentityProvider();
    await projectWithAuth("shop");
    const binding = await browserBinding();
    const e = loginEnv(idp, options.loginEnvOverrides);
    const start = await callLogin(await startPath({ project: "shop", redirect: "/", bind: binding.hash }), e);
    const back = new URL(await idp.approve(start.headers.get("location")!, ADA));
    return { idp, e, cookie: cookiePair(start.headers.get("set-cookie")), back };
  }

  it("refuses a callback without the flow cookie (another browser) with 400", async () => {
    const { idp, e, back } = await started();
    const response = await callLogin(back.pathname + back.search, e);
    await expectRefused(response, 400, /no sign-in in progress/);
    expect(idp.tokenRequests).toBe(0);
  });

  it("refuses a state that is not the flow's with 400", async () => {
    const { idp, e, cookie, back } = await started();
    back.searchParams.set("state", "x".repeat(43));
    await expectRefused(await callLogin(back.pathname + back.search, e, { cookie }), 400, /state mismatch/);
    back.searchParams.delete("state");
    await expectRefused(await callLogin(back.pathname + back.search, e, { cookie }), 400, /state mismatch/);
    expect(idp.tokenRequests).toBe(0);
  });

  it("refuses the flow cookie of another sign-in in the same browser (the state belongs to the first)", async () => {
    const { idp, e, back } = await started();
    const binding = await browserBinding();
    const second = await callLogin(await startPath({ project: "shop", redirect: "/", bind: binding.hash }), e);
    const response = await callLogin(back.pathname + back.search, e, {
      cookie: cookiePair(second.headers.get("set-cookie")),
    });
    await expectRefused(response, 400, /state mismatch/);
    expect(idp.tokenRequests).toBe(0);
  });

  it("refuses a tampered flow cookie and one sealed with another key", async () => {
    const { idp, e, cookie, back } = await started();
    const [name, value] = cookie.split("=") as [string, string];
    const flipped = value.slice(0, -2) + (value.at(-2) === "A" ? "B" : "A") + value.at(-1);
    await expectRefused(
      await callLogin(back.pathname + back.search, e, { cookie: `${name}=${flipped}` }),
      400,
      /damaged or was not issued/,
    );
    const foreign = await sealFlowCookie("g".repeat(48), LOGIN_WORKER_URL, {
      state: back.searchParams.get("state")!,
      nonce: "n",
      verifier: "v",
      slug: "shop",
      redirect: "/",
      bind: "b",
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    await expectRefused(
      await callLogin(back.pathname + back.search, e, { cookie: cookiePair(foreign) }),
      400,
      /damaged or was not issued/,
    );
    expect(idp.tokenRequests).toBe(0);
  });

  it("refuses an expired flow even when the browser still sends its cookie", async () => {
    const { idp, e, back } = await started();
    const expired = await sealFlowCookie(FLOW_SECRET, LOGIN_WORKER_URL, {
      state: back.searchParams.get("state")!,
      nonce: "n",
      verifier: "v".repeat(43),
      slug: "shop",
      redirect: "/",
      bind: "b".repeat(43),
      exp: Math.floor(Date.now() / 1000) - 1,
    });
    await expectRefused(
      await callLogin(back.pathname + back.search, e, { cookie: cookiePair(expired) }),
      400,
      /more than 10 minutes ago/,
    );
    expect(idp.tokenRequests).toBe(0);
  });

  it("refuses an answer that names another issuer (RFC 9207) and one without a code", async () => {
    const { idp, e, cookie, back } = await started();
    const wrongIss = new URL(back);
    wrongIss.searchParams.set("iss", "https://impostor.example");
    await expectRefused(
      await callLogin(wrongIss.pathname + wrongIss.search, e, { cookie }),
      400,
      /another identity provider/,
    );
    const noCode = new URL(back);
    noCode.searchParams.delete("code");
    await expectRefused(await callLogin(noCode.pathname + noCode.search, e, { cookie }), 400, /no authorization code/);
    expect(idp.tokenRequests).toBe(0);
  });

  it("shows the provider's other errors escaped, with a 400", async () => {
    const { e, cookie, back } = await started();
    const url = `/callback?state=${back.searchParams.get("state")}&error=${encodeURIComponent("<script>alert(1)</script>")}`;
    const response = await callLogin(url, e, { cookie });
    const html = await response.clone().text();
    expect(html).not.toContain("<script>");
    await expectRefused(response, 400, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });

  it("refuses a replayed callback URL: the code is single use at the provider", async () => {
    const { idp, e, cookie, back } = await started();
    const first = await callLogin(back.pathname + back.search, e, { cookie });
    expect(first.status).toBe(200);
    // The browser no longer has the cookie (it was cleared); an attacker who kept a copy still gets nothing.
    await expectRefused(
      await callLogin(back.pathname + back.search, e, { cookie }),
      400,
      /refused the authorization code \(invalid_grant\)/,
    );
    expect(idp.tokenRequests).toBe(2);
  });

  it("refuses when the PKCE verifier does not match the challenge the provider saw", async () => {
    const { idp, e, back } = await started();
    // A flow cookie with the right state but another verifier (as if the verifier were swapped).
    const swapped = await sealFlowCookie(FLOW_SECRET, LOGIN_WORKER_URL, {
      state: back.searchParams.get("state")!,
      nonce: "n".repeat(43),
      verifier: "w".repeat(43),
      slug: "shop",
      redirect: "/",
      bind: "b".repeat(43),
      exp: Math.floor(Date.now() / 1000) + 600,
    });
    await expectRefused(
      await callLogin(back.pathname + back.search, e, { cookie: cookiePair(swapped) }),
      400,
      /invalid_grant/,
    );
    expect(idp.tokenRequests).toBe(1);
  });

  it("refuses with 404 when the project was deleted during the sign-in", async () => {
    const { e, cookie, back } = await started();
    await e.DB.prepare("DELETE FROM projects WHERE slug = 'shop'").run();
    await expectRefused(await callLogin(back.pathname + back.search, e, { cookie }), 404, /no longer exists/);
  });
});

const wrongKey = await generateKeyPair("RS256");

describe("GET /callback: the ID token is verified", () => {
  const cases: [string, IdTokenTweaks, RegExp][] = [
    ["a wrong issuer", { issuer: "https://impostor.example" }, /&quot;iss&quot; claim is wrong/],
    ["a wrong audience", { audience: "another-client" }, /&quot;aud&quot; claim is wrong/],
    ["several audiences and no azp", { audience: ["platform-login", "another-client"] }, /&quot;azp&quot;/],
    ["an azp that is another client", { azp: "another-client" }, /&quot;azp&quot;/],
    ["a wrong nonce", { nonce: "n".repeat(43) }, /nonce does not belong/],
    ["no nonce", { nonce: null }, /&quot;nonce&quot; claim is wrong/],
    ["an expired token", { iat: -3600, exp: -1800 }, /expired/],
    ["an iat in the future", { iat: 600, exp: 900 }, /&quot;iat&quot; claim is wrong/],
    ["an old iat", { iat: -3600, exp: 300 }, /expired|&quot;iat&quot;/],
    ["a signature by another key", { signWith: wrongKey.privateKey }, /signature does not verify/],
    ["an unknown key id", { kid: "unknown", signWith: wrongKey.privateKey }, /key the provider does not publish/],
    ["HS256 keyed with the client secret", { alg: "HS256" }, /algorithm that is not allowed/],
    [
      "an unsigned token (alg none)",
      {
        raw: `${btoa('{"alg":"none"}').replace(/=+$/, "")}.${btoa(JSON.stringify({ iss: ISSUER, sub: "x" })).replace(/=+$/, "")}.`,
      },
      /malformed|not allowed/,
    ],
    ["garbage", { raw: "not-a-jwt" }, /malformed/],
  ];

  it.each(cases)("refuses %s", async (_name, tweaks, pattern) => {
    const { callback } = await signInToShop({}, { tweaks });
    await expectRefused(callback, 502, pattern);
  });
});

describe("GET /callback: verified email and the project's domains", () => {
  it.each<[string, Partial<IdpUser>]>([
    ["email_verified false", { email_verified: false }],
    ["email_verified missing", { email_verified: undefined }],
    ['email_verified "true" (a string)', { email_verified: "true" }],
  ])("refuses %s with 403", async (_name, claims) => {
    const { callback } = await signInToShop({}, { user: { ...ADA, ...claims } });
    await expectRefused(callback, 403, /has not verified ada@example.com/);
  });

  it.each([
    ["a@example.com.evil.io"],
    ["a@sub.example.com"],
    ['"a@b"@example.com'],
    ["a@b@example.com"],
    ["a@evil-example.com"],
    ["a@example.co"],
    ["a@example.com "],
    ["a@example.com\n"],
    ["@example.com"],
    ["a@"],
  ])("refuses %j for a project that allows example.com", async (email) => {
    const { callback } = await signInToShop(
      { domains: ["example.com", "example.org"] },
      { user: { sub: "x", email, email_verified: true, name: "X" } },
    );
    await expectRefused(callback, 403, /may not sign in to shop|usable email address/);
  });

  it.each([
    ["a@EXAMPLE.COM", "a@example.com"],
    ["A.Person@Example.Org", "A.Person@example.org"],
  ])("accepts %j (domains compare case-insensitively) and hands the project %j", async (email, expected) => {
    const { shop, binding, callback } = await signInToShop(
      { domains: ["Example.com", "example.org"] },
      { user: { sub: "x", email, email_verified: true, name: "X" } },
    );
    expect(callback.status, await callback.clone().text()).toBe(200);
    const check = await verifyCallbackToken(await tokenFrom(callback), {
      workerSecret: shop.secret,
      projectId: shop.id,
      bindingCookieValue: binding.value,
    });
    expect(check.ok && check.claims.email).toBe(expected);
  });

  it("ignores the provider's hd claim: the email's domain decides", async () => {
    const { callback } = await signInToShop(
      { domains: ["example.com"] },
      { user: { sub: "x", email: "mallory@evil.io", email_verified: true, hd: "example.com" } },
    );
    await expectRefused(
      callback,
      403,
      /mallory@evil.io may not sign in to shop: it accepts accounts from example.com only/,
    );
  });

  it("lets any verified account in when the project registered no domains, or no auth settings at all", async () => {
    const idp = await fakeIdentityProvider();
    await projectWithAuth("shop", {});
    await projectWithAuth("blog", null, { owner: "other@example.net" });
    for (const slug of ["shop", "blog"]) {
      const binding = await browserBinding();
      const { callback } = await signInAtLoginWorker(idp, loginEnv(idp), {
        slug,
        bind: binding.hash,
        user: { sub: "b", email: "bob@other.org", email_verified: true },
      });
      expect(callback.status, await callback.clone().text()).toBe(200);
    }
  });
});
