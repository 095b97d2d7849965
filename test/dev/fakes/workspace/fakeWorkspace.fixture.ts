// The fake Slack's tests: the fake in this isolate, its consent page, code exchange and Web API calls.
import { expect } from "vitest";
import { createFakeWorkspace, type FakeWorkspaceConfig } from "#src/dev/fakes/workspace/fakeWorkspace.ts";

export const BASE = "https://slack.fake";
export const REDIRECT = "https://workspace-plugin.test/oauth/callback";
export const CONFIG: FakeWorkspaceConfig = {
  clientId: "111.222",
  clientSecret: "client-secret",
  signingSecret: "signing-secret",
  webhookUrl: "https://workspace-plugin.test/webhook",
  redirectUris: [REDIRECT],
};

export function fake(overrides: Partial<FakeWorkspaceConfig> = {}) {
  return createFakeWorkspace({ ...CONFIG, ...overrides });
}

export type Fake = ReturnType<typeof fake>;

export const basic = (id: string, secret: string) => `Basic ${btoa(`${id}:${secret}`)}`;

export function form(params: Record<string, string>): { body: string; headers: Record<string, string> } {
  return {
    body: new URLSearchParams(params).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  };
}

export async function consent(
  slack: Fake,
  decision: "allow" | "cancel",
  params: Record<string, string> = {},
): Promise<URL> {
  const q = new URLSearchParams({
    client_id: CONFIG.clientId,
    scope: "chat:write,reactions:write",
    redirect_uri: REDIRECT,
    state: "st-1",
    ...params,
  });
  const page = await slack.fetch(new Request(`${BASE}/oauth/v2/authorize?${q}`));
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(params.team ? `Workspace ${params.team}` : "Test Workspace");
  // Submit the page's form the way a browser would.
  const fields = Object.fromEntries(
    [...html.matchAll(/name="([^"]+)" value="([^"]*)"/g)].map((m) => [
      m[1]!,
      m[2]!.replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n))),
    ]),
  );
  const response = await slack.fetch(
    new Request(`${BASE}/oauth/v2/authorize`, { method: "POST", ...form({ ...fields, decision }), redirect: "manual" }),
  );
  expect(response.status).toBe(302);
  return new URL(response.headers.get("location")!);
}

export async function exchange(
  slack: Fake,
  params: Record<string, string>,
  auth = basic(CONFIG.clientId, CONFIG.clientSecret),
) {
  const { body, headers } = form(params);
  const response = await slack.fetch(
    new Request(`${BASE}/api/oauth.v2.access`, { method: "POST", body, headers: { ...headers, authorization: auth } }),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

export async function install(slack: Fake, team?: string) {
  const location = await consent(slack, "allow", team ? { team } : {});
  return exchange(slack, { code: location.searchParams.get("code")!, redirect_uri: REDIRECT });
}

export async function api(slack: Fake, method: string, token: string | null, params: Record<string, unknown>) {
  const headers: Record<string, string> = { "content-type": "application/json; charset=utf-8" };
  if (token) headers.authorization = `Bearer ${token}`;
  return slack.fetch(new Request(`${BASE}/api/${method}`, { method: "POST", headers, body: JSON.stringify(params) }));
}
