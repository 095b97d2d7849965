import { beforeEach, describe, expect, it } from "vitest";
import { resetIdentityProviderCache } from "#src/workers/login/identityProvider.ts";
import {
  browserBinding,
  callLogin,
  CLIENT_ID,
  expectLoginRefusal,
  fakeIdentityProvider,
  ISSUER,
  LOGIN_WORKER_URL,
  loginEnv,
  projectWithAuth,
  startPath,
  type TestProject,
} from "#test/support/workerd/index.ts";

const NEIGHBOUR_BIND = "N".repeat(43);

beforeEach(() => resetIdentityProviderCache());

async function expectRefusalPage(response: Response, status: number, pattern: RegExp): Promise<string> {
  const html = await expectLoginRefusal(response, status, pattern);
  expect(response.headers.get("set-cookie")).toBeNull();
  expect(response.headers.get("x-frame-options")).toBe("DENY");
  return html;
}

/** The provider, the project "shop" and a browser's binding hash: what a sign-in start begins with. */
async function shopAndBrowser() {
  const idp = await fakeIdentityProvider();
  await projectWithAuth("shop");
  const { hash } = await browserBinding();
  return { idp, hash };
}

describe("GET /start", () => {
  it("seals the flow into an encrypted cookie and redirects to the provider with code + PKCE S256 + state + nonce", async () => {
    const { idp, hash } = await shopAndBrowser();
    const response = await callLogin(
      await startPath({ project: "shop", redirect: "/orders?tab=open", bind: hash }),
      loginEnv(idp),
    );
    expect(response.status).toBe(302);
    expect(response.headers.get("x-frame-options")).toBe("DENY");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(response.headers.get("cache-control")).toBe("no-store");

    const location = new URL(response.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(`${ISSUER}/authorize`);
    const params = location.searchParams;
    expect(params.get("response_type")).toBe("code");
    expect(params.get("client_id")).toBe(CLIENT_ID);
    expect(params.get("redirect_uri")).toBe(`${LOGIN_WORKER_URL}/callback`);
    expect(params.get("scope")).toBe("openid email profile");
    expect(params.get("code_challenge_method")).toBe("S256");
    for (const name of ["state", "nonce", "code_challenge"]) expect(params.get(name)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(params.get("state")).not.toBe(params.get("nonce"));

    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^__Host-login_flow=[A-Za-z0-9_.-]+; /);
    const attributes = cookie.split(/;\s*/).slice(1);
    expect(attributes).toEqual(expect.arrayContaining(["Path=/", "Max-Age=600", "HttpOnly", "SameSite=Lax", "Secure"]));
    expect(attributes.some((a) => /^domain=/i.test(a))).toBe(false);
    // Sealed: neither the state, the nonce, the project nor the path can be read from it.
    for (const secret of [params.get("state")!, params.get("nonce")!, "shop", "orders", hash])
      expect(cookie).not.toContain(secret);
    expect(idp.log).toEqual(["GET /.well-known/openid-configuration"]);
  });

  it("uses a fresh state, nonce and verifier for every sign-in", async () => {
    const { idp, hash } = await shopAndBrowser();
    const seen = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const response = await callLogin(await startPath({ project: "shop", redirect: "/", bind: hash }), loginEnv(idp));
      const params = new URL(response.headers.get("location")!).searchParams;
      for (const name of ["state", "nonce", "code_challenge"]) seen.add(params.get(name)!);
    }
    expect(seen.size).toBe(9);
    // The discovery document is fetched once per isolate.
    expect(idp.log.filter((l) => l.includes("openid-configuration"))).toHaveLength(1);
  });

  // docs/security.md: not single use. A replay starts a sign-in of its own, bound to the same browser, until `exp`.
  it("answers the same signed URL again until it expires, each time a sign-in of its own for the same browser binding", async () => {
    const { idp, hash } = await shopAndBrowser();
    const path = await startPath({ project: "shop", redirect: "/", bind: hash });
    const [first, replay] = [await callLogin(path, loginEnv(idp)), await callLogin(path, loginEnv(idp))];
    expect([first.status, replay.status]).toEqual([302, 302]);
    const state = (r: Response) => new URL(r.headers.get("location")!).searchParams.get("state");
    expect(state(replay)).not.toBe(state(first));
    expect(replay.headers.get("set-cookie")).not.toBe(first.headers.get("set-cookie"));
    const expired = await startPath(
      { project: "shop", redirect: "/", bind: hash },
      { nowMS: Date.now() - 11 * 60_000 },
    );
    await expectRefusalPage(await callLogin(expired, loginEnv(idp)), 400, /more than 10 minutes old/);
  });

  it("names the flow cookie login_flow, without Secure, when the login worker is on plain-http localhost", async () => {
    const { idp, hash } = await shopAndBrowser();
    const e = loginEnv(idp, { LOGIN_PUBLIC_URL: "http://127.0.0.1:9999" });
    const response = await callLogin(await startPath({ project: "shop", redirect: "/", bind: hash }), e);
    expect(response.status).toBe(302);
    const cookie = response.headers.get("set-cookie")!;
    expect(cookie).toMatch(/^login_flow=/);
    expect(cookie).not.toMatch(/Secure/);
    expect(new URL(response.headers.get("location")!).searchParams.get("redirect_uri")).toBe(
      "http://127.0.0.1:9999/callback",
    );
  });

  it("answers an unknown project with a 404 page and never contacts the provider", async () => {
    const idp = await fakeIdentityProvider();
    const { hash } = await browserBinding();
    const response = await callLogin(await startPath({ project: "nope", redirect: "/", bind: hash }), loginEnv(idp));
    await expectRefusalPage(response, 404, /no project named &quot;nope&quot;/);
    expect(idp.log).toEqual([]);
  });

  it.each([
    ["//evil.example"],
    ["/\\evil.example"],
    ["\\\\evil.example"],
    ["https://evil.example"],
    ["https:evil.example"],
    ["%2F%2Fevil.example"],
    ["/%2F%2Fevil.example"],
    ["/%2f/evil.example"],
    ["/%5Cevil.example"],
    ["javascript:alert(1)"],
    ["evil.example"],
    ["\t//evil.example"],
    ["/\t/evil.example"],
    ["/ok\r\nSet-Cookie: x=1"],
    ["/ok%0d%0aSet-Cookie:%20x=1"],
    ["/../other-slug/"],
    ["/a/%2e%2e/b"],
    ["/%E0%A4%A"],
    [""],
    ["/" + "a".repeat(2048)],
  ])("refuses redirect=%j with 400 before anything is stored", async (redirect) => {
    const { idp, hash } = await shopAndBrowser();
    const response = await callLogin(await startPath({ project: "shop", redirect, bind: hash }), loginEnv(idp));
    await expectRefusalPage(response, 400, /return address is not a path inside the project/);
    expect(idp.log).toEqual([]);
  });

  it.each([["/"], ["/dash"], ["/orders?tab=open&q=a%20b"], ["/docs/%C3%A9t%C3%A9#part-2"], ["/a/b/c/"]])(
    "accepts redirect=%j",
    async (redirect) => {
      const { idp, hash } = await shopAndBrowser();
      const response = await callLogin(await startPath({ project: "shop", redirect, bind: hash }), loginEnv(idp));
      expect(response.status, await response.text()).toBe(302);
    },
  );

  it.each<[string, string]>([
    ["no project", "/start?redirect=%2F&bind=BIND"],
    ["a project that is not a slug", "/start?project=Shop!&redirect=%2F&bind=BIND"],
    ["two projects", "/start?project=shop&project=blog&redirect=%2F&bind=BIND"],
    ["no redirect", "/start?project=shop&bind=BIND"],
    ["two redirects", "/start?project=shop&redirect=%2F&redirect=%2F%2Fevil.example&bind=BIND"],
    ["no bind", "/start?project=shop&redirect=%2F"],
    ["a short bind", "/start?project=shop&redirect=%2F&bind=SHORT"],
    ["a bind with padding", "/start?project=shop&redirect=%2F&bind=PADDED"],
  ])("refuses %s with 400", async (_name, path) => {
    const { idp, hash } = await shopAndBrowser();
    const url = path
      .replace("BIND", hash)
      .replace("SHORT", hash.slice(1))
      .replace("PADDED", hash.slice(1) + "=");
    const response = await callLogin(url, loginEnv(idp));
    await expectRefusalPage(response, 400, /sign-in link is not valid/);
  });

  it("answers 502 with a page when the provider's discovery document names another issuer", async () => {
    const idp = await fakeIdentityProvider({ discovery: { issuer: "https://impostor.example" } });
    await projectWithAuth("shop");
    const { hash } = await browserBinding();
    const response = await callLogin(await startPath({ project: "shop", redirect: "/", bind: hash }), loginEnv(idp));
    await expectRefusalPage(response, 502, /names issuer &quot;https:\/\/impostor.example&quot;/);
  });

  it("answers 502 when the provider does not offer PKCE S256", async () => {
    const idp = await fakeIdentityProvider({ discovery: { code_challenge_methods_supported: ["plain"] } });
    await projectWithAuth("shop");
    const { hash } = await browserBinding();
    const response = await callLogin(await startPath({ project: "shop", redirect: "/", bind: hash }), loginEnv(idp));
    await expectRefusalPage(response, 502, /PKCE with S256/);
  });

  it("answers 500 with a page naming what is missing when it is not configured", async () => {
    const { idp, hash } = await shopAndBrowser();
    const response = await callLogin(
      await startPath({ project: "shop", redirect: "/", bind: hash }),
      loginEnv(idp, { OIDC_CLIENT_SECRET: "", LOGIN_FLOW_SECRET: "short" }),
    );
    await expectRefusalPage(response, 500, /missing OIDC_CLIENT_SECRET/);
  });

  it("answers other paths and methods with a 404 page", async () => {
    const idp = await fakeIdentityProvider();
    const response = await callLogin("/authorize", loginEnv(idp));
    await expectRefusalPage(response, 404, /nothing at \/authorize/);
  });
});

describe("GET /start: only a start the project signed (no third party chooses the browser binding)", () => {
  const rows: [string, (shop: TestProject, blog: TestProject, path: string) => Promise<string> | string, RegExp][] = [
    [
      "the popup attack: a neighbouring project signs a start for shop with its own secret and binding",
      (_shop, blog) => startPath({ project: "shop", redirect: "/", bind: NEIGHBOUR_BIND }, { signWith: blog }),
      /not issued by shop for this browser/,
    ],
    [
      "shop's signature with the binding swapped for the neighbour's",
      async (_shop, _blog, path) => path.replace(/bind=[^&]+/, `bind=${NEIGHBOUR_BIND}`),
      /not issued by shop/,
    ],
    [
      "shop's signature with another return path",
      async (_shop, _blog, path) => path.replace("redirect=%2F", "redirect=%2Fadmin"),
      /not issued by shop/,
    ],
    ["no signature", (_shop, _blog, path) => path.replace(/&sig=[^&]+/, ""), /not issued by shop/],
    ["no expiry", (_shop, _blog, path) => path.replace(/&exp=\d+/, ""), /not issued by shop/],
    ["a signature that is garbage", (_shop, _blog, path) => path.replace(/sig=[^&]+/, "sig=x"), /not issued by shop/],
    ["two signatures", (_shop, _blog, path) => `${path}&sig=${"A".repeat(43)}`, /not issued by shop/],
    [
      "an expiry pushed into the future",
      (_shop, _blog, path) => path.replace(/exp=\d+/, `exp=${Math.floor(Date.now() / 1000) + 86_400}`),
      /more than 10 minutes old/,
    ],
    [
      "a start signed more than 10 minutes ago (expired)",
      (shop) =>
        startPath(
          { project: "shop", redirect: "/", bind: NEIGHBOUR_BIND },
          { signWith: shop, nowMS: Date.now() - 601_000 },
        ),
      /more than 10 minutes old/,
    ],
  ];

  it.each(rows)(
    "refuses %s with a 400 page, sets no flow cookie and never contacts the provider",
    async (_n, make, pattern) => {
      const idp = await fakeIdentityProvider();
      const shop = await projectWithAuth("shop", {}, { private: true });
      const blog = await projectWithAuth("blog", {}, { private: true, owner: "mallory@example.net" });
      const { hash } = await browserBinding();
      const good = await startPath({ project: "shop", redirect: "/", bind: hash });
      const response = await callLogin(await make(shop, blog, good), loginEnv(idp));
      await expectRefusalPage(response, 400, pattern);
      expect(idp.log).toEqual([]);
      // The same start, as shop signed it, works.
      expect((await callLogin(good, loginEnv(idp))).status).toBe(302);
    },
  );
});
