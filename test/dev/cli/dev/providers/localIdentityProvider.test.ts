import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOCAL_IDP_PASSWORD, startLocalIdentityProvider } from "#src/dev/cli/dev/providers/localIdentityProvider.ts";
import type { LocalIdentityProvider } from "#src/dev/cli/dev/providers/localIdentityProvider.ts";

const CLIENT_ID = "platform-login";
const CLIENT_SECRET = "local-secret";
const REDIRECT_URI = "http://127.0.0.1:9/callback";

let idp: LocalIdentityProvider;
beforeAll(async () => {
  idp = await startLocalIdentityProvider({
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: REDIRECT_URI,
  });
});
afterAll(() => idp?.stop());

const b64url = (bytes: Buffer) => bytes.toString("base64url");

/** A browser's worth of cookies for one origin, and redirects followed by hand (303/302 only). */
class Browser {
  cookies = new Map<string, string>();

  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set("cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    const response = await fetch(url, { ...init, headers, redirect: "manual" });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair, ...attributes] = cookie.split(/;\s*/);
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const expired = attributes.some(
        (a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()),
      );
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, pair!.slice(eq + 1));
    }
    return response;
  }

  /** Follows redirects until one leaves the provider (returns that URL) or a page answers (returns the response). */
  async follow(url: string, init: RequestInit = {}): Promise<{ response: Response; url: string }> {
    let response = await this.fetch(url, init);
    let current = url;
    for (let hops = 0; hops < 10 && [302, 303].includes(response.status); hops++) {
      current = new URL(response.headers.get("location")!, current).toString();
      await response.arrayBuffer();
      if (!current.startsWith(idp.issuer)) return { response, url: current };
      response = await this.fetch(current);
    }
    return { response, url: current };
  }
}

function authorizationRequest(extra: Record<string, string | null> = {}) {
  const verifier = b64url(randomBytes(32));
  const params: Record<string, string | null> = {
    response_type: "code",
    client_id: CLIENT_ID,
    redirect_uri: REDIRECT_URI,
    scope: "openid email profile",
    state: b64url(randomBytes(16)),
    nonce: b64url(randomBytes(16)),
    code_challenge: b64url(createHash("sha256").update(verifier).digest()),
    code_challenge_method: "S256",
    ...extra,
  };
  const url = new URL(`${idp.issuer}/auth`);
  for (const [k, v] of Object.entries(params)) if (v !== null) url.searchParams.set(k, v);
  return { url: url.toString(), verifier, state: params.state!, nonce: params.nonce! };
}

function formPost(body: Record<string, string>): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(body).toString(),
  };
}

/** Signs in through the login and consent pages; resolves with the redirect back to the client. */
async function signInThroughPages(
  browser: Browser,
  authorizeUrl: string,
  email: string,
  password = LOCAL_IDP_PASSWORD,
): Promise<URL> {
  const login = await browser.follow(authorizeUrl);
  expect(login.response.status).toBe(200);
  const loginHtml = await login.response.text();
  expect(loginHtml).toContain('name="email"');
  // Under `platform up` too: named for neither command, and with an icon so the browser asks for no /favicon.ico.
  expect(loginHtml).toContain("<small>Local identity provider (on this machine, not a real one)</small>");
  expect(loginHtml).not.toContain("platform dev");
  expect(loginHtml).toContain('<link rel="icon" href="data:,">');
  expect(login.response.headers.get("content-security-policy")).toContain("img-src data:");
  const action = /<form method="post" action="([^"]+\/login)"/.exec(loginHtml)![1]!;
  const consent = await browser.follow(new URL(action, idp.issuer).toString(), formPost({ email, password }));
  expect(consent.response.status, await consent.response.clone().text()).toBe(200);
  const consentHtml = await consent.response.text();
  expect(consentHtml).toContain("Allow access?");
  expect(consentHtml).toContain(email);
  const confirm = /<form method="post" action="([^"]+\/confirm)"/.exec(consentHtml)![1]!;
  const done = await browser.follow(new URL(confirm, idp.issuer).toString(), formPost({}));
  return new URL(done.url);
}

async function exchange(code: string, verifier: string, secret = CLIENT_SECRET) {
  const response = await fetch(`${idp.issuer}/token`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${secret}`).toString("base64")}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: REDIRECT_URI,
      code_verifier: verifier,
    }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, string> };
}

describe("local identity provider", () => {
  it("serves its discovery document for an http loopback issuer", async () => {
    expect(idp.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as Record<string, unknown>;
    expect(doc).toMatchObject({
      issuer: idp.issuer,
      authorization_endpoint: `${idp.issuer}/auth`,
      token_endpoint: `${idp.issuer}/token`,
      jwks_uri: `${idp.issuer}/jwks`,
    });
    expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
    expect(doc.response_types_supported).toEqual(["code"]);
    expect(doc.token_endpoint_auth_methods_supported).toContain("client_secret_basic");
    expect(doc.claims_supported).toEqual(expect.arrayContaining(["email", "email_verified", "name"]));
  });

  it("completes the authorization-code + PKCE flow for ada through its login and consent pages", async () => {
    const browser = new Browser();
    const request = authorizationRequest();
    const back = await signInThroughPages(browser, request.url, "ada@example.com");
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("state")).toBe(request.state);
    expect(back.searchParams.get("iss")).toBe(idp.issuer);
    const code = back.searchParams.get("code")!;

    const tokens = await exchange(code, request.verifier);
    expect(tokens.status, JSON.stringify(tokens.json)).toBe(200);
    const { payload, protectedHeader } = await jwtVerify(
      tokens.json.id_token!,
      createRemoteJWKSet(new URL(`${idp.issuer}/jwks`)),
      {
        issuer: idp.issuer,
        audience: CLIENT_ID,
      },
    );
    expect(protectedHeader.alg).toBe("RS256");
    expect(payload).toMatchObject({
      sub: "user-ada",
      email: "ada@example.com",
      email_verified: true,
      name: "Ada Lovelace",
      nonce: request.nonce,
    });

    // Codes are single use.
    expect((await exchange(code, request.verifier)).json.error).toBe("invalid_grant");
  });

  it("says email_verified false for the unverified user", async () => {
    const request = authorizationRequest();
    const back = await signInThroughPages(new Browser(), request.url, "eve@example.com");
    const tokens = await exchange(back.searchParams.get("code")!, request.verifier);
    const { payload } = await jwtVerify(tokens.json.id_token!, createRemoteJWKSet(new URL(`${idp.issuer}/jwks`)));
    expect(payload.email).toBe("eve@example.com");
    expect(payload.email_verified).toBe(false);
  });

  it("refuses a code exchanged with another verifier or the wrong client secret", async () => {
    const request = authorizationRequest();
    const back = await signInThroughPages(new Browser(), request.url, "bob@other.org");
    const code = back.searchParams.get("code")!;
    expect((await exchange(code, request.verifier, "wrong-secret")).status).toBe(401);
    const other = await exchange(code, b64url(randomBytes(32)));
    expect(other.json.error).toBe("invalid_grant");
  });

  it("requires PKCE: an authorization request without a code challenge is sent back with invalid_request", async () => {
    const request = authorizationRequest({ code_challenge: null, code_challenge_method: null });
    const { url } = await new Browser().follow(request.url);
    const back = new URL(url);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("code")).toBeNull();
  });

  it("never redirects to an unregistered redirect URI", async () => {
    const request = authorizationRequest({ redirect_uri: "http://127.0.0.1:9/elsewhere" });
    const { response } = await new Browser().follow(request.url);
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("redirect_uri");
  });

  it("re-shows the login form with 401 on a wrong password, and sends Cancel back as access_denied", async () => {
    const browser = new Browser();
    const request = authorizationRequest();
    const login = await browser.follow(request.url);
    const html = await login.response.text();
    const action = /<form method="post" action="([^"]+\/login)"/.exec(html)![1]!;
    const wrong = await browser.fetch(
      new URL(action, idp.issuer).toString(),
      formPost({ email: "ada@example.com", password: "nope" }),
    );
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("Unknown email or wrong password.");
    const abort = /<a href="([^"]+\/abort)">Cancel<\/a>/.exec(html)![1]!;
    const { url } = await browser.follow(new URL(abort, idp.issuer).toString());
    const back = new URL(url);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe(request.state);
  });
});
