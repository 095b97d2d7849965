import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { authenticateProjectCall } from "../../../../src/platform/plugins/shared/authenticateProjectCall.ts";
import {
  listConnectionSummaries,
  markConnectionRevoked,
  markConnectionsRevokedForExternalUser,
  readConnection,
  upsertConnection,
} from "../../../../src/platform/db/connectionsStore.ts";
import { dispatchToProject } from "../../../../src/platform/plugins/shared/dispatchToProject.ts";
import { claimEvent, EVENT_DEDUPE_TTL_MS, releaseEvent } from "../../../../src/platform/db/eventDedupe.ts";
import { OAUTH_STATE_LIFETIME_MS, signOAuthState, verifyOAuthState } from "../../../../src/platform/plugins/shared/oauthState.ts";
import { pluginErrorResponse } from "../../../../src/platform/plugins/shared/pluginErrorResponse.ts";
import { claimResource, findResourceOwner, releaseResource } from "../../../../src/platform/db/resourceClaims.ts";
import { makeResourceOwnerRef, resolveResourceOwnerRef } from "../../../../src/platform/plugins/shared/resourceOwnerRef.ts";
import { openToken, sealToken } from "../../../../src/platform/plugins/shared/tokenVault.ts";
import { decode32ByteKey } from "../../../../src/platform/plugins/shared/secretKeys.ts";
import { base64url } from "../../../../src/core/crypto/encoding.ts";
import { PlatformError } from "../../../../src/core/errors.ts";
import { IDENTITY_HEADER, INTERNAL_HEADER, verifyRequestToken } from "../../../../src/core/requestToken.ts";
import { fakeDispatcher, userWithProject } from "../../../support/workerd/index.ts";
import { pluginEnv, signedRequest, STATE_SECRET, TOKEN_ENCRYPTION_KEY } from "../../../support/workerd/index.ts";

async function twoProjects() {
  const a = await userWithProject("ada@example.com", "alpha");
  const b = await userWithProject("bob@example.com", "beta");
  return { a: a.row, b: b.row };
}

async function rejection(promise: Promise<unknown>): Promise<PlatformError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlatformError);
  return error as PlatformError;
}

describe("authenticateProjectCall", () => {
  it("accepts a token signed by the project for this method, path and body, and returns the raw body", async () => {
    const { a } = await twoProjects();
    const body = JSON.stringify({ hello: "world" });
    const { project, body: bytes } = await authenticateProjectCall(await signedRequest({ project: a, path: "/send", body }), env.DB);
    expect(project.id).toBe(a.id);
    expect(new TextDecoder().decode(bytes)).toBe(body);
  });

  it.each([
    ["no header", { drop: true }, /Missing X-Platform-Identity/],
    ["a malformed token", { raw: "abc.def" }, /Malformed/],
    ["an expired token (65 s old)", { nowOffsetMs: -65_000 }, /expired/],
    ["a token from the future (65 s)", { nowOffsetMs: 65_000 }, /expired/],
    ["another project's id with this project's secret", { otherId: true }, /^Invalid X-Platform-Identity token\.$/],
    ["a forged secret", { secret: "f".repeat(64) }, /^Invalid X-Platform-Identity token\.$/],
    ["an unknown project id", { asProjectId: 999_999 }, /^Invalid X-Platform-Identity token\.$/],
    ["a signature over another path", { signedPath: "/other" }, /^Invalid X-Platform-Identity token\.$/],
    ["a signature over another body", { signedBody: "{}" }, /^Invalid X-Platform-Identity token\.$/],
  ] as const)("refuses %s with 401", async (_name, spec, message) => {
    const { a, b } = await twoProjects();
    const s = spec as Record<string, unknown>;
    let request = await signedRequest({
      project: a,
      path: "/send",
      body: '{"x":1}',
      // The signing clock is read here, not when the table is built: tests may run seconds later.
      nowMs: s.nowOffsetMs === undefined ? undefined : Date.now() + (s.nowOffsetMs as number),
      secret: s.secret as string | undefined,
      asProjectId: s.otherId ? b.id : (s.asProjectId as number | undefined),
      signedPath: s.signedPath as string | undefined,
      signedBody: s.signedBody as string | undefined,
    });
    if (s.drop || s.raw) {
      const headers = new Headers(request.headers);
      headers.delete(IDENTITY_HEADER);
      if (s.raw) headers.set(IDENTITY_HEADER, s.raw as string);
      request = new Request(request.url, { method: "POST", headers, body: '{"x":1}' });
    }
    const error = await rejection(authenticateProjectCall(request, env.DB));
    expect(error.code).toBe("unauthorized");
    expect(error.message).toMatch(message);
  });

  it("refuses an oversized body with 413 before looking at the token", async () => {
    const { a } = await twoProjects();
    const request = await signedRequest({ project: a, path: "/send", body: "x".repeat(70_000) });
    expect((await rejection(authenticateProjectCall(request, env.DB))).code).toBe("payload_too_large");
  });
});

describe("tokenVault", () => {
  it("round-trips, uses a fresh IV each time, and refuses any tampering, another key or another context", async () => {
    const sealed = await sealToken(TOKEN_ENCRYPTION_KEY, "xoxb-secret", "workspace:access:1");
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain("xoxb");
    expect(await openToken(TOKEN_ENCRYPTION_KEY, sealed, "workspace:access:1")).toBe("xoxb-secret");
    expect(await sealToken(TOKEN_ENCRYPTION_KEY, "xoxb-secret", "workspace:access:1")).not.toBe(sealed);

    const body = sealed.slice(3);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1);
    const tampered = [`v1.${flip(body, 0)}`, `v1.${flip(body, 20)}`, `v1.${flip(body, body.length - 2)}`, `v2.${body}`, "plain"];
    for (const bad of tampered) expect((await rejection(openToken(TOKEN_ENCRYPTION_KEY, bad, "workspace:access:1"))).code).toBe("internal");
    expect((await rejection(openToken("ff".repeat(32), sealed, "workspace:access:1"))).code).toBe("internal");
    expect((await rejection(openToken(TOKEN_ENCRYPTION_KEY, sealed, "workspace:access:2"))).code).toBe("internal");
  });

  it("still opens rows sealed in the vault's earlier format v1.<iv>.<ciphertext>", async () => {
    const key = await crypto.subtle.importKey("raw", decode32ByteKey(TOKEN_ENCRYPTION_KEY, "TOKEN_ENCRYPTION_KEY"), "AES-GCM", false, ["encrypt"]);
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const additionalData = new TextEncoder().encode("v1:workspace:access:1");
    const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData }, key, new TextEncoder().encode("xoxb-old"));
    const row = `v1.${base64url(iv)}.${base64url(ct)}`;
    expect(await openToken(TOKEN_ENCRYPTION_KEY, row, "workspace:access:1")).toBe("xoxb-old");
    expect((await rejection(openToken(TOKEN_ENCRYPTION_KEY, row, "workspace:access:2"))).code).toBe("internal");
  });

  it("accepts a base64 key and refuses a key that is not 32 bytes", async () => {
    const b64 = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
    expect(await openToken(b64, await sealToken(b64, "t"))).toBe("t");
    expect((await rejection(sealToken("short", "t"))).message).toMatch(/TOKEN_ENCRYPTION_KEY must be 32 bytes/);
  });
});

describe("oauthState", () => {
  it("verifies its own state for the same plugin within 10 minutes", async () => {
    const now = 1_700_000_000_000;
    const { state, claims } = await signOAuthState(STATE_SECRET, { projectId: 42, pluginId: "chatserver" }, now);
    expect(claims.nonce).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await verifyOAuthState(STATE_SECRET, state, "chatserver", now + OAUTH_STATE_LIFETIME_MS - 1)).toEqual({ ok: true, claims });
  });

  it.each([
    ["expired", async (s: string) => s, "chatserver", OAUTH_STATE_LIFETIME_MS, "expired"],
    ["for another plugin", async (s: string) => s, "workspace", 0, "wrong_plugin"],
    ["with a flipped payload byte", async (s: string) => (s[0] === "e" ? "f" : "e") + s.slice(1), "chatserver", 0, "invalid"],
    ["signed with another secret", async () => (await signOAuthState("another-secret-another-secret-xx!", { projectId: 42, pluginId: "chatserver" }, 1_700_000_000_000)).state, "chatserver", 0, "invalid"],
    ["forged (unsigned JSON)", async () => btoa(JSON.stringify({ projectId: 1, pluginId: "chatserver", nonce: "n", exp: 9e15 })), "chatserver", 0, "invalid"],
    ["empty", async () => "", "chatserver", 0, "invalid"],
  ] as const)("refuses a state that is %s", async (_name, mutate, pluginId, later, reason) => {
    const now = 1_700_000_000_000;
    const { state } = await signOAuthState(STATE_SECRET, { projectId: 42, pluginId: "chatserver" }, now);
    expect(await verifyOAuthState(STATE_SECRET, await mutate(state), pluginId, now + later)).toEqual({ ok: false, reason });
  });
});

describe("connectionsStore", () => {
  it("keeps one connection per plugin and project: a reinstall replaces it and clears revoked", async () => {
    const { a } = await twoProjects();
    await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, { pluginId: "chatserver", projectId: a.id, externalUserId: "u1", accessToken: "at1", refreshToken: "rt1", tokenExpiresAt: 5000 });
    const stored = await env.DB.prepare("SELECT access_token, refresh_token FROM plugin_oauth_connections").first<{ access_token: string; refresh_token: string }>();
    expect(stored!.access_token).toMatch(/^v1\./);
    expect(stored!.refresh_token).toMatch(/^v1\./);

    expect(await markConnectionRevoked(env.DB, "chatserver", a.id)).toBe(true);
    expect((await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "chatserver", a.id))!.revokedAt).not.toBeNull();

    await upsertConnection(env.DB, TOKEN_ENCRYPTION_KEY, { pluginId: "chatserver", projectId: a.id, externalUserId: "u2", accessToken: "at2" });
    const connection = await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "chatserver", a.id);
    expect(connection).toMatchObject({ externalUserId: "u2", accessToken: "at2", refreshToken: null, tokenExpiresAt: null, revokedAt: null });
    expect((await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first<{ n: number }>())!.n).toBe(1);

    const summaries = await listConnectionSummaries(env.DB, a.id);
    expect(summaries).toEqual([{ plugin: "chatserver", externalUserId: "u2", connectedAt: expect.any(String), tokenExpiresAt: null, revoked: false, revokedAt: null }]);
    expect(JSON.stringify(summaries)).not.toContain("at2");

    expect(await markConnectionsRevokedForExternalUser(env.DB, "chatserver", "u2")).toBe(1);
    expect(await readConnection(env.DB, TOKEN_ENCRYPTION_KEY, "workspace", a.id)).toBeNull();
  });
});

describe("claimResource", () => {
  it("gives a resource to one project: another project's claim is a conflict and changes nothing; the same project's re-claim succeeds", async () => {
    const { a, b } = await twoProjects();
    const claim = { pluginId: "workspace", resourceType: "workspace" as const, externalResourceId: "T1", displayName: "Team One" };
    await claimResource(env.DB, { ...claim, projectId: a.id });
    const error = await rejection(claimResource(env.DB, { ...claim, projectId: b.id, displayName: "Hijack" }));
    expect(error.code).toBe("conflict");
    expect(error.message).toMatch(/already connected to another project/);
    await claimResource(env.DB, { ...claim, projectId: a.id, displayName: "Team One renamed", metadata: { x: 1 } });

    const owner = await findResourceOwner(env.DB, "workspace", "workspace", "T1");
    expect(owner!.project.id).toBe(a.id);
    expect(owner!.resource.display_name).toBe("Team One renamed");
    expect(JSON.parse(owner!.resource.metadata)).toEqual({ x: 1 });
    expect(await findResourceOwner(env.DB, "workspace", "workspace", "T2")).toBeNull();

    expect(await releaseResource(env.DB, "workspace", "workspace", "T1", b.id)).toBe(false);
    expect(await releaseResource(env.DB, "workspace", "workspace", "T1", a.id)).toBe(true);
    await claimResource(env.DB, { ...claim, projectId: b.id });
  });
});

describe("ResourceOwnerRef", () => {
  it("resolves for the owning project only, and refuses forged or foreign refs", async () => {
    const { a, b } = await twoProjects();
    const penv = pluginEnv();
    await claimResource(env.DB, { pluginId: "chatserver", resourceType: "server", projectId: a.id, externalResourceId: "G1", displayName: "Guild" });
    const ref = await makeResourceOwnerRef(penv, { pluginId: "chatserver", resourceType: "server", externalResourceId: "G1" });
    expect(ref).not.toContain(String(a.id) + ".");
    expect((await resolveResourceOwnerRef(penv, ref, "chatserver", a)).external_resource_id).toBe("G1");
    expect((await rejection(resolveResourceOwnerRef(penv, ref, "chatserver", b))).code).toBe("forbidden");
    expect((await rejection(resolveResourceOwnerRef(penv, ref, "workspace", a))).code).toBe("invalid_input");
    expect((await rejection(resolveResourceOwnerRef(penv, ref.slice(0, -2) + "AA", "chatserver", a))).code).toBe("invalid_input");
    expect((await rejection(resolveResourceOwnerRef(penv, 42, "chatserver", a))).code).toBe("invalid_input");
  });
});

describe("eventDedupe", () => {
  it("delivers a retried event once; a released claim lets the retry through; old claims are purged", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => claimEvent(env.DB, "workspace", "Ev1")));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await claimEvent(env.DB, "chatserver", "Ev1")).toBe(true);
    await releaseEvent(env.DB, "workspace", "Ev1");
    expect(await claimEvent(env.DB, "workspace", "Ev1")).toBe(true);
    expect(await claimEvent(env.DB, "workspace", "Ev1", Date.now() + EVENT_DEDUPE_TTL_MS + 1000)).toBe(true);
  });
});

describe("dispatchToProject", () => {
  it("POSTs the payload to /__plugin/<pluginId> of the project's script with an internal token", async () => {
    const { a } = await twoProjects();
    const dispatcher = fakeDispatcher(() => Response.json({ handled: true }));
    const payload = { kind: "event" as const, event: { text: "hi" }, resource: "ref" as never, project: { slug: a.slug } };
    const response = await dispatchToProject(pluginEnv({ DISPATCHER: dispatcher.namespace }), a, "workspace", payload);
    expect(await response.json()).toEqual({ handled: true });
    const [call] = dispatcher.calls;
    expect(call!.scriptName).toBe(a.script_name);
    expect(call!.url.pathname).toBe("/__plugin/workspace");
    expect(JSON.parse(call!.body)).toEqual(payload);
    const check = await verifyRequestToken("internal", call!.headers.get(INTERNAL_HEADER), () => a.worker_secret, {
      method: "POST",
      pathAndQuery: "/__plugin/workspace",
      body: call!.body,
    });
    expect(check.ok).toBe(true);
  });
});

describe("pluginErrorResponse", () => {
  it.each([
    [new PlatformError("rate_limited", "slow down", { retryAfterSeconds: 12.2 }), 429, "13"],
    [new PlatformError("unauthorized", "no"), 401, null],
    [new PlatformError("revoked", "reinstall"), 409, null],
    [new Error("boom"), 500, null],
  ] as const)("maps %s", async (error, status, retryAfter) => {
    const response = pluginErrorResponse(error);
    expect(response.status).toBe(status);
    expect(response.headers.get("retry-after")).toBe(retryAfter);
    const body = (await response.json()) as { error: { code: string; message: string } };
    expect(body.error.message.length).toBeGreaterThan(0);
  });
});
