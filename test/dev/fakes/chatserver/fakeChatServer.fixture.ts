// The fake chat server's tests: the fake in this isolate and its OAuth2 consent and token requests.
import { expect } from "vitest";
import {
  createFakeChatServer,
  TEST_GUILD,
  type FakeChatServerConfig,
} from "#src/dev/fakes/chatserver/fakeChatServer.ts";

export const FAKE = "https://discord.fake";
export const SEED = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
export const REDIRECT = "https://chatserver.plugin.test/oauth/callback";

/** The fake chat server in this isolate; what it delivers to the plugin's webhook is recorded and left open (202). */
export function setup(overrides: Partial<FakeChatServerConfig> = {}) {
  const delivered: Request[] = [];
  const fake = createFakeChatServer({
    baseUrl: FAKE,
    applicationId: "900000000000000001",
    clientId: "900000000000000001",
    clientSecret: "client-secret",
    botToken: "bot-token",
    signingSeed: SEED,
    webhookUrl: "https://chatserver.plugin.test/webhook",
    redirectUris: [REDIRECT],
    deliver: async (request) => {
      delivered.push(request);
      // Answer the way that leaves the interaction open (Discord's "202 and respond by callback").
      return new Response(null, { status: 202 });
    },
    ...overrides,
  });
  const call = (path: string, init?: RequestInit) => fake.fetch(new Request(FAKE + path, init));
  return { fake, call, delivered };
}

/** The bot's consent page for `scope`, then Approve (or `action`) for the test server: the redirect back to the plugin. */
export async function approve(
  call: ReturnType<typeof setup>["call"],
  action = "approve",
  scope = "bot applications.commands",
) {
  const page = await call(
    `/oauth2/authorize?client_id=900000000000000001&response_type=code&scope=${encodeURIComponent(scope)}&permissions=2048&redirect_uri=${encodeURIComponent(REDIRECT)}&state=st-1`,
  );
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain("Test Server");
  expect(html).toContain(TEST_GUILD.id);
  // An empty icon: the browser asks the fake for no /favicon.ico (a 404).
  expect(html).toContain('<link rel="icon" href="data:,">');
  const form = new URLSearchParams({
    client_id: "900000000000000001",
    redirect_uri: REDIRECT,
    state: "st-1",
    scope,
    permissions: "2048",
    guild_id: TEST_GUILD.id,
    action,
  });
  const answer = await call("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
  expect(answer.status).toBe(302);
  return new URL(answer.headers.get("location")!);
}

/** A token request to the fake's OAuth2 token endpoint, with the client's Basic credentials unless `basic` is false. */
export const tokenRequest = (fields: Record<string, string>, basic = true) =>
  ({
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(basic ? { authorization: "Basic " + btoa("900000000000000001:client-secret") } : {}),
    },
    body: new URLSearchParams(fields).toString(),
  }) satisfies RequestInit;
