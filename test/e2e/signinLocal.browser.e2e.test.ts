import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect, it } from "vitest";
import {
  artifactPath,
  copyDemo,
  initProject,
  useChromium,
  useWorkDir,
  withDevAndChromium,
} from "#test/support/e2e/index.ts";
import type { DevProcess } from "#test/support/e2e/index.ts";

// Ports of this file: 8923 (a copy of the demo), 8896 (a project that allows only example.com),
// 8897 (the demo as a private deployment under /<slug>/), 8906 (sessions that end).

const work = useWorkDir("platform-signin-");
// One Chromium for the file (each test its own contexts); each test its own project and platform.
const chromium = useChromium();
const onDev = (args: string[], use: (dev: DevProcess, browser: Browser) => Promise<void>) =>
  withDevAndChromium(args, use, chromium);

async function sessionCookies(context: BrowserContext) {
  return (await context.cookies()).filter((c) => c.name.startsWith("platform_session"));
}

/** Nobody signed in: a navigation to `url` (…/api/private/me) lands on the sign-in form, which will return there. */
async function expectSignInRedirect(page: Page, url: string) {
  const response = await page.goto(url);
  expect(response!.status()).toBe(200);
  const landed = new URL(page.url());
  expect(landed.pathname).toMatch(/\/api\/auth\/signin\/idp$/);
  expect(landed.searchParams.get("redirect")).toBe("/api/private/me");
}

it("the demo: sign in with the local form, reach /api/private/me, sign out; Cancel leaves no session", async () => {
  const dir = copyDemo(work);
  await onDev([dir, "--port", "8923"], async (dev, browser) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(dev.url + "/");
    expect(await page.locator("#greeting").textContent()).toContain("You are not signed in.");
    await expectSignInRedirect(page, dev.url + "/api/private/me");
    expect((await context.request.get(dev.url + "/api/private/me")).status()).toBe(401);

    // Sign in through the dummy form.
    await page.goto(dev.url + "/");
    await page.getByRole("link", { name: "Sign in" }).click();
    await page.waitForURL(/\/api\/auth\/signin\/idp\?redirect=/);
    expect(await page.locator("h1").textContent()).toMatch(/^Sign in to /);
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Name (optional)").fill("Ada Lovelace");
    await page.getByRole("button", { name: "Login" }).click();
    await page.waitForURL(dev.url + "/");
    expect(await page.locator("#greeting").textContent()).toContain("Hello, Ada Lovelace (ada@example.com)!");
    await page.screenshot({ path: artifactPath("signin-local-greeting.png"), fullPage: true });

    const [session] = await sessionCookies(context);
    expect(session).toMatchObject({
      name: "platform_session",
      path: "/",
      httpOnly: true,
      secure: false,
      sameSite: "Lax",
    });
    const lifetime = session!.expires - Date.now() / 1000;
    expect(lifetime).toBeGreaterThan(2_592_000 - 120);
    expect(lifetime).toBeLessThanOrEqual(2_592_000 + 5);

    const me = await page.goto(dev.url + "/api/private/me");
    expect(me!.status()).toBe(200);
    expect(await me!.json()).toEqual({ email: "ada@example.com", name: "Ada Lovelace" });

    // The workflow routes stay open to everyone (the demo's workflow browser test does not sign in).
    expect((await page.goto(dev.url + "/api/runs"))!.status()).toBe(200);

    // Sign out.
    await page.goto(dev.url + "/");
    await page.getByRole("link", { name: "Sign out" }).click();
    await page.waitForURL(dev.url + "/");
    expect(await page.locator("#greeting").textContent()).toContain("You are not signed in.");
    expect(await sessionCookies(context)).toEqual([]);
    await expectSignInRedirect(page, dev.url + "/api/private/me");
    const after = await context.request.get(dev.url + "/api/private/me");
    expect(after.status()).toBe(401);
    expect(await after.json()).toMatchObject({ error: { code: "unauthorized" } });

    // Cancel: back to the page with auth_error=cancelled, and no session.
    await page.goto(dev.url + "/");
    await page.getByRole("link", { name: "Sign in" }).click();
    await page.waitForURL(/\/api\/auth\/signin\/idp/);
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.waitForURL(/auth_error=cancelled/);
    expect(new URL(page.url()).pathname).toBe("/");
    expect(new URL(page.url()).searchParams.get("auth_error")).toBe("cancelled");
    expect(await page.locator("#notice").textContent()).toBe("Sign-in cancelled.");
    expect(await page.locator("#greeting").textContent()).toContain("You are not signed in.");
    expect(await sessionCookies(context)).toEqual([]);
    await expectSignInRedirect(page, dev.url + "/api/private/me");
    expect((await context.request.get(dev.url + "/api/private/me")).status()).toBe(401);
  });
});

it("a project that allows only example.com refuses another domain with a refusal page and no session", async () => {
  const dir = path.join(work, "members-only");
  await initProject(
    dir,
    `import { Router } from "itty-router";
import { auth } from "platform";

auth.allow({ domains: ["example.com"] });

const router = Router();
router.get("/", async (request) => {
  const user = await auth.user(request);
  return new Response(user ? "Signed in as " + user.email : "Nobody is signed in.");
});
export default router;
`,
  );
  await onDev([dir, "--port", "8896"], async (dev, browser) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(dev.url + "/api/auth/signin/idp?redirect=%2F");
    expect(await page.locator("body").textContent()).toContain("Only addresses at example.com may sign in.");
    await page.getByLabel("Email").fill("eve@other.org");
    const refused = page.waitForResponse(
      (r) => r.request().method() === "POST" && r.url().endsWith("/api/auth/signin/idp"),
    );
    await page.getByRole("button", { name: "Login" }).click();
    expect((await refused).status()).toBe(403);
    expect(await page.locator("h1").textContent()).toBe("Sign-in refused");
    expect(await page.locator("body").textContent()).toContain(
      "eve@other.org may not sign in to this app: only addresses at example.com are allowed.",
    );
    await page.screenshot({ path: artifactPath("signin-local-refused.png"), fullPage: true });
    expect(await sessionCookies(context)).toEqual([]);
    await page.goto(dev.url + "/");
    expect(await page.locator("body").textContent()).toBe("Nobody is signed in.");

    // The same rule lets an address at the listed domain in, whatever its case.
    await page.goto(dev.url + "/api/auth/signin/idp?redirect=%2F");
    await page.getByLabel("Email").fill("grace@EXAMPLE.COM");
    await page.getByRole("button", { name: "Login" }).click();
    await page.waitForURL(dev.url + "/");
    expect(await page.locator("body").textContent()).toBe("Signed in as grace@example.com");
  });
});

it("a private deployment (platform dev --private): every hop keeps the /<slug> prefix and the cookie is scoped to it", async () => {
  const dir = copyDemo(work, "private-demo");
  await onDev([dir, "--port", "8897", "--private"], async (dev, browser) => {
    const projectUrl = /private deployment at (http:\/\/localhost:8897\/([a-z0-9-]+)\/)/.exec(dev.output());
    expect(projectUrl, dev.output()).not.toBeNull();
    const [, home, slug] = projectUrl!;
    const context = await browser.newContext();
    const page = await context.newPage();

    await page.goto(home!);
    await page.getByRole("link", { name: "Sign in" }).click();
    await page.waitForURL(`${home}api/auth/signin/idp?redirect=/`);
    await page.getByLabel("Email").fill("ada@example.com");
    await page.getByLabel("Name (optional)").fill("Ada Lovelace");
    await page.getByRole("button", { name: "Login" }).click();
    await page.waitForURL(home!);
    expect(await page.locator("#greeting").textContent()).toContain("Hello, Ada Lovelace (ada@example.com)!");
    const [session] = await sessionCookies(context);
    expect(session).toMatchObject({
      name: `platform_session_${slug}`,
      path: `/${slug}`,
      httpOnly: true,
      secure: false,
      sameSite: "Lax",
    });
    expect((await page.goto(`${home}api/private/me`))!.status()).toBe(200);

    await page.goto(home!);
    await page.getByRole("link", { name: "Sign out" }).click();
    await page.waitForURL(home!);
    expect(await sessionCookies(context)).toEqual([]);
    await expectSignInRedirect(page, `${home}api/private/me`);

    await page.goto(`${home}api/auth/signin/idp?redirect=${encodeURIComponent("//evil.example")}`);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.waitForURL(/auth_error=cancelled/);
    expect(page.url()).toBe(`${home}?auth_error=cancelled`);
    expect(await sessionCookies(context)).toEqual([]);
  });
});

/** Signs `context` in through the local form as `email`; returns its session cookie's value. */
async function signInWithForm(context: BrowserContext, url: string, email: string): Promise<string> {
  const page = await context.newPage();
  await page.goto(url + "/api/auth/signin/idp?redirect=%2F");
  await page.getByLabel("Email").fill(email);
  await page.getByRole("button", { name: "Login" }).click();
  await page.waitForURL(url + "/");
  await page.close();
  const [session] = await sessionCookies(context);
  expect(session, `a session cookie for ${email}`).toBeDefined();
  return session!.value;
}

it("sessions end on the platform: a copied cookie stops working after sign-out, and auth.signOutEverywhere ends a second browser's session", async () => {
  const dir = path.join(work, "sessions");
  await initProject(
    dir,
    `import { Router } from "itty-router";
import { auth } from "platform";

auth.allow();

const router = Router();
router.all("/api/*", auth.require());
router.get("/api/me", async (request) => Response.json(await auth.user(request)));
router.post("/api/sign-out-everywhere", async (request) =>
  Response.json({ ended: await auth.signOutEverywhere(request) }),
);
router.get("/", () => new Response("home"));
export default router;
`,
  );
  await onDev([dir, "--port", "8906"], async (dev, browser) => {
    const me = (cookie: string) => fetch(dev.url + "/api/me", { headers: { cookie: `platform_session=${cookie}` } });

    // 1. Sign out in the browser; a copy of its cookie, replayed from elsewhere, is refused.
    const first = await browser.newContext();
    const copied = await signInWithForm(first, dev.url, "ada@example.com");
    expect((await me(copied)).status).toBe(200);
    const page = await first.newPage();
    await page.goto(dev.url + "/api/auth/signout");
    await page.waitForURL(dev.url + "/");
    expect(await sessionCookies(first)).toEqual([]);
    const replay = await me(copied);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({ error: { code: "unauthorized" } });
    // The same copy planted in another browser is refused there too.
    const thief = await browser.newContext();
    await thief.addCookies([{ name: "platform_session", value: copied, url: dev.url }]);
    expect((await thief.request.get(dev.url + "/api/me")).status()).toBe(401);

    // 2. Two browsers of one user, a third of another: sign out everywhere from the first.
    const laptop = await browser.newContext();
    const phone = await browser.newContext();
    const colleague = await browser.newContext();
    await signInWithForm(laptop, dev.url, "ada@example.com");
    await signInWithForm(phone, dev.url, "ada@example.com");
    await signInWithForm(colleague, dev.url, "bob@example.com");
    expect((await phone.request.get(dev.url + "/api/me")).status()).toBe(200);

    const laptopPage = await laptop.newPage();
    await laptopPage.goto(dev.url + "/");
    const ended = await laptopPage.evaluate(async () => {
      const response = await fetch("/api/sign-out-everywhere", { method: "POST" });
      return { status: response.status, body: await response.json() };
    });
    expect(ended).toEqual({ status: 200, body: { ended: 2 } });

    const phoneAfter = await phone.request.get(dev.url + "/api/me");
    expect(phoneAfter.status()).toBe(401);
    expect(await phoneAfter.json()).toMatchObject({ error: { code: "unauthorized" } });
    expect((await laptop.request.get(dev.url + "/api/me")).status()).toBe(401);
    expect((await colleague.request.get(dev.url + "/api/me")).status()).toBe(200);
  });
});
