/**
 * GET /projects/:slug/webhooks: the endpoints the last metadata recorded (what `platform webhook
 * list` and the console show), each with the URL a provider posts to and its last deliveries from
 * the project's own log; a metadata with a bad webhook is refused and keeps the previous list.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { webhookDeliveryLine } from "#src/contracts/webhookDeliveryLine.ts";
import type { ApiEnv } from "#src/workers/api/env.ts";
import { projectLogOf } from "#src/workers/api/projectLogs/projectLogRoutes.ts";
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
  return ((await response.json()) as { webhooks: { name: string; url: string; deliveries: unknown[] }[] }).webhooks;
}

describe("GET /projects/:slug/webhooks", () => {
  it("lists each endpoint with its URL on the project's origin (public: its subdomain; private: its prefix)", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "priv", { private: true });
    expect((await putWebhooks(user.token, "shop", [STRIPE, GITHUB])).status).toBe(200);
    expect((await putWebhooks(user.token, "priv", [GITHUB])).status).toBe(200);
    const domain = env.PLATFORM_DOMAIN;
    expect(await listed(user.token, "shop")).toEqual([
      { ...GITHUB, url: `https://shop.${domain}/__platform/webhooks/pushes`, deliveries: [] },
      { ...STRIPE, url: `https://shop.${domain}/__platform/webhooks/stripe-orders`, deliveries: [] },
    ]);
    expect(await listed(user.token, "priv")).toEqual([
      { ...GITHUB, url: `https://${domain}/priv/__platform/webhooks/pushes`, deliveries: [] },
    ]);
    // The next metadata replaces the list.
    await putWebhooks(user.token, "shop", [GITHUB]);
    expect((await listed(user.token, "shop")).map((w) => w.name)).toEqual(["pushes"]);
  });

  it("answers each endpoint's last deliveries from the project's own log, newest first", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop");
    const { row: other } = await userWithProject("eve@example.com", "eves");
    await putWebhooks(user.token, "shop", [STRIPE, GITHUB]);
    const T0 = Date.UTC(2026, 10, 29, 1, 0, 0);
    const line = (at: number, record: Parameters<typeof webhookDeliveryLine>[0]) =>
      ({ kind: "console", at, level: "log", message: webhookDeliveryLine(record) }) as const;
    await projectLogOf(env as unknown as ApiEnv, row.id)!.append([
      line(T0, { webhook: "stripe-orders", delivery: "evt_1", verified: true, runId: "run-1", started: true }),
      line(T0 + 1, { webhook: "stripe-orders", delivery: null, verified: false, refused: "bad_signature" }),
    ]);
    // Another project logging a line in the same shape writes to its own log, never to this list.
    await projectLogOf(env as unknown as ApiEnv, other.id)!.append([
      line(T0 + 2, { webhook: "stripe-orders", delivery: "evt_forged", verified: true, runId: "x", started: true }),
    ]);
    const [pushes, stripe] = await listed(user.token, "shop");
    expect(pushes!.deliveries).toEqual([]);
    expect(stripe!.deliveries).toEqual([
      { webhook: "stripe-orders", delivery: null, verified: false, refused: "bad_signature", at: T0 + 1 },
      { webhook: "stripe-orders", delivery: "evt_1", verified: true, runId: "run-1", started: true, at: T0 },
    ]);
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
      { ...STRIPE, url: `https://shop.${env.PLATFORM_DOMAIN}/__platform/webhooks/stripe-orders`, deliveries: [] },
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
