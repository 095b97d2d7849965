import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Browser, Request as PlaywrightRequest, Response as PlaywrightResponse } from "playwright-core";
import { expect, it } from "vitest";
import { artifactPath, useDevAndChromium, useWorkDir } from "#test/support/e2e/index.ts";

// The deployed sign-in flow, end to end on this machine: a private project
// under `platform dev --login oidc --private`, the login worker, the local
// OpenID Connect provider's real login and consent pages, the callback token
// and the project's session, in headless Chromium.

const PORT = 8924;
const SLUG = "signin-oidc-e2e";
const work = useWorkDir("platform-signin-");

const PROJECT = `import { Router } from "itty-router";
import { auth } from "platform";

auth.allow({ domains: ["example.com"] });

const escape = (s) => s.replace(/[&<>"']/g, (c) => "&#" + c.charCodeAt(0) + ";");
const router = Router();
router.all("/api/private/*", auth.require());
router.get("/api/private/me", async (request) => Response.json(await auth.user(request)));
router.get("/", async (request) => {
  const user = await auth.user(request);
  const body = user
    ? '<h1 id="greeting">Hello, ' + escape(user.name) + '</h1><p id="email">' + escape(user.email) + '</p><a id="signout" href="api/auth/signout">Sign out</a>'
    : '<h1 id="greeting">Hello, stranger</h1><a id="signin" href="api/auth/signin/idp?redirect=%2F">Sign in</a>';
  return new Response("<!doctype html><title>signin e2e</title>" + body, { headers: { "content-type": "text/html; charset=utf-8" } });
});
export default router;
`;

// One platform and one Chromium for both tests; each test signs in from its own browser contexts.
const dir = path.join(work, SLUG);
const onPlatform = useDevAndChromium([dir, "--port", String(PORT), "--login", "oidc", "--private"], () => {
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: SLUG, private: true, type: "module" }));
  writeFileSync(path.join(dir, "src/index.ts"), PROJECT);
});

it("signs in through the login worker and the local OpenID Connect provider, refuses a replayed callback, and signs out", async () => {
  await onPlatform(async (dev, browser) => {
    const output = dev.output();
    const projectUrl = `http://localhost:${PORT}/${SLUG}/`;
    expect(output).toContain(`private deployment at ${projectUrl}`);
    const loginUrl = /login worker at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;
    const issuer = /identity provider at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)![1]!;

    const context = await browser.newContext();
    const page = await context.newPage();
    const responses: PlaywrightResponse[] = [];
    const requests: PlaywrightRequest[] = [];
    page.on("response", (response) => responses.push(response));
    page.on("request", (request) => requests.push(request));

    // 1. The project sends the browser to the login worker, which sends it to the provider's login page.
    await page.goto(`${projectUrl}api/auth/signin/idp?redirect=/`);
    expect(page.url().startsWith(`${issuer}/interaction/`)).toBe(true);
    const start = responses.find((r) => r.url().startsWith(`${loginUrl}/start?`))!;
    expect(start.status()).toBe(302);
    const startQuery = new URL(start.url()).searchParams;
    expect(startQuery.get("project")).toBe(SLUG);
    expect(startQuery.get("redirect")).toBe("/");
    expect(startQuery.get("bind")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(startQuery.get("sig")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const authorize = new URL((await start.headerValue("location"))!);
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    const flowCookie = (await context.cookies(loginUrl)).find((c) => c.name === "login_flow")!;
    expect(flowCookie).toMatchObject({ httpOnly: true, sameSite: "Lax", path: "/" });

    // 2. The provider's real login form, then its consent page.
    await page.screenshot({ path: artifactPath("signin-oidc-provider-login.png"), fullPage: true });
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Password").fill("password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Allow" }).click();

    // 3. Back through the login worker's /callback and the project's /api/auth/callback, signed in.
    await page.waitForURL(projectUrl);
    await expect.poll(() => page.locator("#greeting").textContent()).toBe("Hello, Ada Lovelace");
    expect(await page.locator("#email").textContent()).toBe("ada@example.com");
    await page.screenshot({ path: artifactPath("signin-oidc-signed-in.png"), fullPage: true });

    // The login worker hands the token over in a POST form: no redirect, and no URL to the project carries it.
    const loginCallback = responses.find((r) => r.url().startsWith(`${loginUrl}/callback?`))!;
    expect(loginCallback.status()).toBe(200);
    const headers = await loginCallback.allHeaders();
    expect(headers["referrer-policy"]).toBe("no-referrer");
    expect(headers["cache-control"]).toBe("no-store");
    expect(headers.location).toBeUndefined();
    const callbackPost = requests.find((r) => r.url() === `${projectUrl}api/auth/callback`)!;
    expect(callbackPost.method()).toBe("POST");
    const postBody = callbackPost.postData()!;
    const token = new URLSearchParams(postBody).get("token")!;
    expect(token).toMatch(/^v1\./);
    const toProject = requests.filter((r) => r.url().startsWith(`http://localhost:${PORT}/`));
    expect(toProject.length).toBeGreaterThan(1);
    for (const request of toProject) {
      expect(request.url()).not.toContain(token.slice(3, 40));
      expect((await request.allHeaders()).referer ?? "").not.toContain(token.slice(3, 40));
    }
    const projectCallback = responses.find((r) => r.request() === callbackPost)!;
    expect(projectCallback.status()).toBe(303);
    expect((await context.cookies(loginUrl)).find((c) => c.name === "login_flow")).toBeUndefined();
    // The binding cookie (SameSite=None, Secure on http://localhost) rode the login worker's cross-site POST.
    const postCookies = (await callbackPost.allHeaders()).cookie ?? "";
    expect(postCookies).toContain(`platform_bind_${SLUG}=`);

    // 4. The protected API answers the signed-in browser.
    const me = await context.request.get(`${projectUrl}api/private/me`);
    expect(me.status()).toBe(200);
    expect(await me.json()).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });

    // 5. The recorded callback POST replayed byte for byte (same body, same cookies) signs nobody in;
    //    a GET with the token in the URL is refused outright.
    const replay = await fetch(`${projectUrl}api/auth/callback`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: postCookies },
      body: postBody,
      redirect: "manual",
    });
    expect(replay.status).toBe(401);
    expect(await replay.text()).toContain("already used");
    expect(replay.headers.getSetCookie().some((c) => c.startsWith(`platform_session_${SLUG}=v1`))).toBe(false);
    const stranger = await browser.newContext();
    const strangerPage = await stranger.newPage();
    const viaUrl = await strangerPage.goto(`${projectUrl}api/auth/callback?token=${encodeURIComponent(token)}`);
    expect(viaUrl!.status()).toBe(405);
    expect((await stranger.request.get(`${projectUrl}api/private/me`)).status()).toBe(401);
    await stranger.close();

    // 6. Sign out from the app's own page.
    await page.goto(projectUrl);
    await page.locator("#signout").click();
    await page.waitForURL(projectUrl);
    await expect.poll(() => page.locator("#greeting").textContent()).toBe("Hello, stranger");
    expect((await context.request.get(`${projectUrl}api/private/me`)).status()).toBe(401);
    await context.close();
  });
});

/** Signs in as `email` in a fresh browser context through the provider's login and consent; the login worker refuses it (403). */
async function refusedAtLogin(browser: Browser, projectUrl: string, loginUrl: string, email: string) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${projectUrl}api/auth/signin/idp?redirect=/`);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill("password");
  await page.getByRole("button", { name: "Sign in" }).click();
  const [refusal] = await Promise.all([
    page.waitForResponse((r) => r.url().startsWith(`${loginUrl}/callback?`)),
    page.getByRole("button", { name: "Allow" }).click(),
  ]);
  expect(refusal.status()).toBe(403);
  return { context, page };
}

it("refuses an unverified account and an account outside the project's domains at the login worker", async () => {
  await onPlatform(async (dev, browser) => {
    const projectUrl = `http://localhost:${PORT}/${SLUG}/`;
    const loginUrl = /login worker at (http:\/\/127\.0\.0\.1:\d+)/.exec(dev.output())![1]!;
    // eve@example.com has not verified her address.
    const { context, page } = await refusedAtLogin(browser, projectUrl, loginUrl, "eve@example.com");
    await expect.poll(() => page.locator("h1").textContent()).toBe("Sign-in refused");
    expect(await page.content()).toContain("has not verified eve@example.com");
    expect((await context.request.get(`${projectUrl}api/private/me`)).status()).toBe(401);
    await context.close();

    // bob@other.org is verified, but the project allows example.com only (auth.allow reached the login worker through the metadata).
    const bob = await refusedAtLogin(browser, projectUrl, loginUrl, "bob@other.org");
    await expect
      .poll(() => bob.page.content())
      .toContain("bob@other.org may not sign in to signin-oidc-e2e: it accepts accounts from example.com only.");
    await bob.page.getByRole("link", { name: `Back to ${SLUG}` }).click();
    await bob.page.waitForURL(projectUrl);
    expect(await bob.page.locator("#greeting").textContent()).toBe("Hello, stranger");
    await bob.context.close();
  });
});
