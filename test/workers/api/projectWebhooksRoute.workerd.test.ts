/**
 * GET /projects/:slug/webhooks: the endpoints the last metadata recorded (what `platform webhook
 * list` prints), each with the URL a provider posts to; a metadata with a bad webhook is refused
 * and keeps the previous list.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  callApi,
  callJson,
  createProject,
  deployTarget,
  expectError,
  userWithProject,
} from "#test/support/workerd/index.ts";

const STRIPE = { name: "stripe-orders", verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" };
const GITHUB = { name: "pushes", verify: "github", secret: "GITHUB_SECRET" };

async function putWebhooks(token: string, slug: string, webhooks: unknown) {
  return callApi("PUT", `/projects/${slug}/metadata`, { token, body: { webhooks } });
}

async function listed(token: string, slug: string) {
  const response = await callApi("GET", `/projects/${slug}/webhooks`, { token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { webhooks: { name: string; url: string }[] }).webhooks;
}

describe("GET /projects/:slug/webhooks", () => {
  it("lists each endpoint with its URL on the project's origin (public: its subdomain; private: its prefix)", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "priv", { private: true });
    expect((await putWebhooks(user.token, "shop", [STRIPE, GITHUB])).status).toBe(200);
    expect((await putWebhooks(user.token, "priv", [GITHUB])).status).toBe(200);
    const domain = env.PLATFORM_DOMAIN;
    expect(await listed(user.token, "shop")).toEqual([
      { ...GITHUB, url: `https://shop.${domain}/__platform/webhooks/pushes` },
      { ...STRIPE, url: `https://shop.${domain}/__platform/webhooks/stripe-orders` },
    ]);
    expect(await listed(user.token, "priv")).toEqual([
      { ...GITHUB, url: `https://${domain}/priv/__platform/webhooks/pushes` },
    ]);
    // The next metadata replaces the list.
    await putWebhooks(user.token, "shop", [GITHUB]);
    expect((await listed(user.token, "shop")).map((w) => w.name)).toEqual(["pushes"]);
  });

  it("a push records the endpoints from the bundle's metadata", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const bundle = "export default { fetch() { return new Response('hi') } };";
    const pushed = await callJson(
      "PUT",
      "/projects/shop/deployment",
      { bundle, metadata: { crons: [], webhooks: [STRIPE] } },
      user.token,
      deployTarget().env,
    );
    expect(pushed.status).toBe(200);
    expect(await listed(user.token, "shop")).toEqual([
      { ...STRIPE, url: `https://shop.${env.PLATFORM_DOMAIN}/__platform/webhooks/stripe-orders` },
    ]);
    const refused = await callJson(
      "PUT",
      "/projects/shop/deployment",
      { bundle, metadata: { crons: [], webhooks: [{ ...STRIPE, verify: "paypal" }] } },
      user.token,
      deployTarget().env,
    );
    expect(refused.status).toBe(400);
  });

  it.each([
    { name: "an unknown scheme", webhooks: [{ ...GITHUB, verify: "paypal" }] },
    { name: "a name with a slash", webhooks: [{ ...GITHUB, name: "a/b" }] },
    { name: "a name used twice", webhooks: [GITHUB, GITHUB] },
    { name: "a secret that is not a name", webhooks: [{ ...GITHUB, secret: "whsec_abc def" }] },
    { name: "not a list", webhooks: { pushes: GITHUB } },
  ])("refuses metadata with $name (400) and keeps the previous list", async ({ webhooks }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putWebhooks(user.token, "shop", [STRIPE]);
    await expectError(await putWebhooks(user.token, "shop", webhooks), 400, "invalid_input");
    expect((await listed(user.token, "shop")).map((w) => w.name)).toEqual(["stripe-orders"]);
  });

  it("answers 404 for another user's project", async () => {
    await userWithProject("ada@example.com", "shop");
    const { user: eve } = await userWithProject("eve@example.com", "eves");
    await expectError(await callApi("GET", "/projects/shop/webhooks", { token: eve.token }), 404, "not_found");
  });
});
