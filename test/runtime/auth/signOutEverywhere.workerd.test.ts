import { env as testEnv } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { auth, readSessionUser } from "#src/runtime/auth/index.ts";
import { userKeyOf } from "#src/runtime/auth/session.ts";
import { SESSION_RECHECK_MS, SessionCache } from "#src/runtime/auth/sessionCache.ts";
import { withBasePathStripped } from "#src/runtime/entry/requestBasePath.ts";
import { DEPLOYED_PRIVATE, DEPLOYED_PUBLIC, LOCAL_PUBLIC, MODES, envOf } from "#test/support/workerd/index.ts";
import { originOf, sealedSession, send, sessionCookieName, signIn, type Mode } from "#test/support/workerd/index.ts";

beforeEach(() => auth.allow());

const me = (mode: Mode, session: string) => send(mode, "/api/private/me", { cookies: [session] });

async function signOutEverywhere(mode: Mode, session: string): Promise<Response> {
  return send(mode, "/api/private/sign-out-everywhere", {
    method: "POST",
    headers: { "content-type": "application/json" },
    cookies: [session],
  });
}

/** What another isolate (its own session cache), at `nowMS`, reads from the cookie: the entry's view of the request. */
function readAs(isolate: SessionCache, mode: Mode, session: string, nowMS: number) {
  const request = new Request(originOf(mode) + (mode.private ? "/shop/" : "/"), {
    headers: { cookie: session, ...(mode.private ? { "X-Platform-Base-Path": "/shop" } : {}) },
  });
  return readSessionUser(withBasePathStripped(request), envOf(mode), nowMS, isolate);
}

async function liveSessionsOf(email: string): Promise<number> {
  const row = await testEnv.DB.prepare("SELECT COUNT(*) AS n FROM project_sessions WHERE user_key = ?")
    .bind(await userKeyOf(email))
    .first<{ n: number }>();
  return row!.n;
}

describe("auth.signOutEverywhere(request): every session of the signed-in user ends", () => {
  it.each(MODES.map((m) => [m.name, m] as const))(
    "%s: a second browser's session gets 401 right after, in this isolate",
    async (_name, mode) => {
      const firstBrowser = await signIn(mode, "ada@example.com");
      const secondBrowser = await signIn(mode, "ada@example.com");
      expect((await me(mode, secondBrowser)).status).toBe(200);

      const response = await signOutEverywhere(mode, firstBrowser);
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ ended: 2 });

      const second = await me(mode, secondBrowser);
      expect(second.status).toBe(401);
      expect(((await second.json()) as { error: { code: string } }).error.code).toBe("unauthorized");
      expect((await me(mode, firstBrowser)).status).toBe(401);
      expect(await liveSessionsOf("ada@example.com")).toBe(0);
    },
  );

  it("another isolate that had not seen the session refuses it at once; one that had, within SESSION_RECHECK_MS (injected clock)", async () => {
    const t0 = Date.now();
    const firstBrowser = await signIn(DEPLOYED_PRIVATE);
    const secondBrowser = await signIn(DEPLOYED_PRIVATE);
    const sawIt = new SessionCache();
    expect(await readAs(sawIt, DEPLOYED_PRIVATE, secondBrowser, t0)).not.toBeNull();

    expect((await signOutEverywhere(DEPLOYED_PRIVATE, firstBrowser)).status).toBe(200);

    expect(await readAs(new SessionCache(), DEPLOYED_PRIVATE, secondBrowser, t0)).toBeNull();
    expect(await readAs(sawIt, DEPLOYED_PRIVATE, secondBrowser, t0 + SESSION_RECHECK_MS - 1)).not.toBeNull();
    expect(await readAs(sawIt, DEPLOYED_PRIVATE, secondBrowser, t0 + SESSION_RECHECK_MS)).toBeNull();
  });

  it("other users' sessions stay signed in", async () => {
    const ada = await signIn(DEPLOYED_PUBLIC, "ada@example.com");
    const bob = await signIn(DEPLOYED_PUBLIC, "bob@example.com");
    expect(await (await signOutEverywhere(DEPLOYED_PUBLIC, ada)).json()).toEqual({ ended: 1 });
    expect((await me(DEPLOYED_PUBLIC, bob)).status).toBe(200);
    expect(await readAs(new SessionCache(), DEPLOYED_PUBLIC, bob, Date.now())).not.toBeNull();
  });

  it("a user who signs in again afterwards has a working session", async () => {
    const old = await signIn(LOCAL_PUBLIC);
    await signOutEverywhere(LOCAL_PUBLIC, old);
    const fresh = await signIn(LOCAL_PUBLIC);
    expect((await me(LOCAL_PUBLIC, fresh)).status).toBe(200);
    expect((await me(LOCAL_PUBLIC, old)).status).toBe(401);
  });

  it("a copy of a cookie kept after sign-out ends nothing (0): the user's other browsers stay signed in", async () => {
    const stolen = await signIn(LOCAL_PUBLIC);
    const other = await signIn(LOCAL_PUBLIC);
    await send(LOCAL_PUBLIC, "/api/auth/signout", { headers: { "sec-fetch-site": "same-origin" }, cookies: [stolen] });
    const response = await send(LOCAL_PUBLIC, "/sign-out-everywhere", { method: "POST", cookies: [stolen] });
    expect(await response.json()).toEqual({ ended: 0 });
    expect((await me(LOCAL_PUBLIC, other)).status).toBe(200);
  });

  it("when the platform cannot vouch for the request's session, it rejects with not_ready (503), not 'nobody'", async () => {
    // Recorded by the platform, never read by this isolate, so it must be asked.
    const session = `${sessionCookieName(DEPLOYED_PUBLIC)}=${await sealedSession()}`;
    const down = envOf(DEPLOYED_PUBLIC, {
      PLATFORM_API: { fetch: async () => new Response("down", { status: 500 }) } as unknown as Fetcher,
    });
    const response = await send(DEPLOYED_PUBLIC, "/sign-out-everywhere", {
      method: "POST",
      cookies: [session],
      env: down,
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("not_ready");
    expect((await me(DEPLOYED_PUBLIC, session)).status).toBe(200);
  });

  it("with nobody signed in on the request, nothing ends: 0", async () => {
    const ada = await signIn(LOCAL_PUBLIC);
    const response = await send(LOCAL_PUBLIC, "/sign-out-everywhere", { method: "POST" });
    expect(await response.json()).toEqual({ ended: 0 });
    expect((await me(LOCAL_PUBLIC, ada)).status).toBe(200);
  });
});

describe("auth.signOutEverywhere(email)", () => {
  const byEmail = (email: string, mode: Mode = DEPLOYED_PUBLIC) =>
    send(mode, "/admin/sign-out", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email }),
    });

  it("ends that user's sessions, matching the address without regard to case", async () => {
    const session = await signIn(DEPLOYED_PUBLIC, "Ada@Example.com");
    const response = await byEmail("ada@EXAMPLE.com");
    expect(await response.json()).toEqual({ ended: 1 });
    expect((await me(DEPLOYED_PUBLIC, session)).status).toBe(401);
  });

  it("an address that is not one is refused with invalid_input (400), nothing ended", async () => {
    const session = await signIn(DEPLOYED_PUBLIC);
    const response = await byEmail("not an address");
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: "invalid_input",
        message:
          'auth.signOutEverywhere(): "not an address" is not an email address; pass the request your handler received, or the user\'s address.',
      },
    });
    expect((await me(DEPLOYED_PUBLIC, session)).status).toBe(200);
  });

  it("when the platform cannot be reached it rejects with not_ready (503) and nothing ends", async () => {
    const session = await signIn(DEPLOYED_PUBLIC);
    const down = envOf(DEPLOYED_PUBLIC, {
      PLATFORM_API: { fetch: async () => new Response("down", { status: 500 }) } as unknown as Fetcher,
    });
    const response = await send(DEPLOYED_PUBLIC, "/admin/sign-out", {
      method: "POST",
      body: JSON.stringify({ email: "ada@example.com" }),
      env: down,
    });
    expect(response.status).toBe(503);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("not_ready");
    expect((await me(DEPLOYED_PUBLIC, session)).status).toBe(200);
  });
});
