// Webhook triggers through the test kit, as a project's test would drive them (typed for workerd, run by Node).
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhook, workflow } from "platform";
import { testRequest } from "platform/testing";
import { webhookHost } from "#src/runtime/webhooks/webhookDelivery.ts";

// A project as a user writes one: a fulfilment workflow three providers start, and a routed endpoint.
const STRIPE_SECRET = "whsec_stripe_test_secret";
const GITHUB_SECRET = "github-test-secret";
const STANDARD_SECRET = `whsec_${Buffer.from("a standard webhooks key of 32 b!").toString("base64")}`;
const ENV = { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, GITHUB_WEBHOOK_SECRET: GITHUB_SECRET, STANDARD_SECRET };
const NOW_S = 1_780_000_000;

workflow("fulfil", { start: async (ctx) => ({ done: true, result: ctx.data }) });
workflow("approval", {
  start: async () => ({ step: "decided", waitFor: "review" }),
  decided: async (ctx) => ({ done: true, result: ctx.event }),
});
webhook("stripe-orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });
webhook("github-pushes", { verify: "github", secret: "GITHUB_WEBHOOK_SECRET", start: "fulfil" });
webhook("standard-events", { verify: "standard", secret: "STANDARD_SECRET", start: "fulfil" });
webhook("unset-secret", { verify: "github", secret: "NOT_SET", start: "fulfil" });
webhook("reviews", {
  verify: "github",
  secret: "GITHUB_WEBHOOK_SECRET",
  route: (payload, headers) => {
    const { action, runId, review } = payload as { action: string; runId?: string; review?: unknown };
    if (action === "request") return { start: { workflow: "approval", data: { from: headers["x-github-delivery"] } } };
    if (action === "review") return { send: { runId: runId!, event: "review", payload: review } };
    return null;
  },
});

// A route that answers something that is not a decision.
webhook("broken", {
  verify: "github",
  secret: "GITHUB_WEBHOOK_SECRET",
  route: () => ({ start: null }) as never,
});

const project = { fetch: () => new Response("the project's own answer") };
const stripe = new Stripe("sk_test_unused");
let saved = webhookHost.clock;
beforeAll(() => {
  saved = webhookHost.clock;
  webhookHost.clock = () => NOW_S * 1000;
});
afterAll(() => {
  webhookHost.clock = saved;
});

function post(path: string, body: string, headers: Record<string, string>) {
  return testRequest(project, path, {
    method: "POST",
    body,
    headers: { "content-type": "application/json", ...headers },
    env: ENV,
  });
}

function stripeDelivery(eventId: string, options: { secret?: string; timestamp?: number; tamper?: boolean } = {}) {
  const body = JSON.stringify({ id: eventId, type: "checkout.session.completed", data: { object: { id: "cs_1" } } });
  const signature = stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? STRIPE_SECRET,
    timestamp: options.timestamp ?? NOW_S,
  });
  return post("/__platform/webhooks/stripe-orders", options.tamper ? body.replace("cs_1", "cs_2") : body, {
    "stripe-signature": signature,
  });
}

async function githubDelivery(
  deliveryId: string,
  payload: unknown,
  options: { secret?: string; tamper?: boolean } = {},
) {
  const body = JSON.stringify(payload);
  const signature = await githubSign(options.secret ?? GITHUB_SECRET, body);
  return post(
    `/__platform/webhooks/${(payload as { to?: string }).to ?? "github-pushes"}`,
    options.tamper ? `${body} ` : body,
    {
      "x-hub-signature-256": signature,
      "x-github-delivery": deliveryId,
      "x-github-event": "push",
    },
  );
}

function standardDelivery(messageId: string, options: { secret?: string; timestampS?: number; tamper?: boolean } = {}) {
  const body = JSON.stringify({ type: "invoice.paid", data: { id: "inv_1" } });
  const timestampS = options.timestampS ?? NOW_S;
  const signature = new Webhook(options.secret ?? STANDARD_SECRET).sign(messageId, new Date(timestampS * 1000), body);
  return post("/__platform/webhooks/standard-events", options.tamper ? body.replace("inv_1", "inv_2") : body, {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestampS),
    "webhook-signature": signature,
  });
}

const OTHER_STANDARD = `whsec_${Buffer.from("another key entirely, 32 bytes!!").toString("base64")}`;

describe("POST /__platform/webhooks/<name>: signed deliveries start their run once", () => {
  it.each([
    {
      provider: "stripe (stripe.webhooks.generateTestHeaderString)",
      send: () => stripeDelivery("evt_start_1"),
      delivery: "evt_start_1",
      data: { event: { id: "evt_start_1", type: "checkout.session.completed" }, headers: {} },
    },
    {
      provider: "github (@octokit/webhooks-methods sign)",
      send: () => githubDelivery("gh-delivery-1", { ref: "refs/heads/main" }),
      delivery: "gh-delivery-1",
      data: {
        event: { ref: "refs/heads/main" },
        headers: { "x-github-delivery": "gh-delivery-1", "x-github-event": "push" },
      },
    },
    {
      provider: "standard (standardwebhooks Webhook.sign)",
      send: () => standardDelivery("msg_start_1"),
      delivery: "msg_start_1",
      data: {
        event: { type: "invoice.paid" },
        headers: { "webhook-id": "msg_start_1", "webhook-timestamp": String(NOW_S) },
      },
    },
  ])(
    "$provider: 200, one run started with { event, headers }; the same delivery again answers that run and starts none",
    async ({ send, delivery, data }) => {
      const first = await send();
      expect(first.status).toBe(200);
      const answer = (await first.json()) as { delivery: string; runId: string; created: boolean };
      expect(answer).toMatchObject({ delivery, created: true });
      expect(first.runs).toHaveLength(1);
      expect(first.runs[0]!.id).toBe(answer.runId);
      expect(first.runs[0]!.view.status).toBe("completed");
      expect(await first.runs[0]!.result()).toMatchObject(data);

      const again = await send();
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual({ delivery, runId: answer.runId, created: false });
      expect(again.runs).toHaveLength(0);
    },
  );
});

describe("a missing, bad or stale signature answers 401 and starts nothing", () => {
  it.each([
    {
      name: "stripe: tampered body",
      send: () => stripeDelivery("evt_bad_1", { tamper: true }),
      reason: "does not|No v1",
    },
    {
      name: "stripe: wrong secret",
      send: () => stripeDelivery("evt_bad_2", { secret: "whsec_wrong" }),
      reason: "No v1",
    },
    {
      name: "stripe: 10 minutes old",
      send: () => stripeDelivery("evt_bad_3", { timestamp: NOW_S - 600 }),
      reason: "300 s",
    },
    {
      name: "github: tampered body",
      send: () => githubDelivery("gh-bad-1", { a: 1 }, { tamper: true }),
      reason: "does not match",
    },
    {
      name: "github: wrong secret",
      send: () => githubDelivery("gh-bad-2", { a: 1 }, { secret: "wrong" }),
      reason: "does not match",
    },
    { name: "standard: tampered body", send: () => standardDelivery("msg_bad_1", { tamper: true }), reason: "No v1" },
    {
      name: "standard: wrong secret",
      send: () => standardDelivery("msg_bad_2", { secret: OTHER_STANDARD }),
      reason: "No v1",
    },
    {
      name: "standard: 10 minutes old",
      send: () => standardDelivery("msg_bad_3", { timestampS: NOW_S - 600 }),
      reason: "300 s",
    },
    {
      name: "no signature at all",
      send: () => post("/__platform/webhooks/stripe-orders", "{}", {}),
      reason: "no Stripe-Signature",
    },
    {
      name: "an endpoint whose project secret is not set",
      send: () => githubDelivery("gh-bad-3", { to: "unset-secret" }),
      reason: "NOT_SET is not set",
    },
  ])("$name", async ({ send, reason }) => {
    const response = await send();
    expect(response.status).toBe(401);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("unauthorized");
    expect(error.message).toMatch(new RegExp(reason));
    expect(response.runs).toHaveLength(0);
  });
});

describe("route decides per delivery", () => {
  it("starts, then sends to the run it started, then ignores", async () => {
    const started = await githubDelivery("route-1", { to: "reviews", action: "request" });
    expect(started.status).toBe(200);
    const { runId } = (await started.json()) as { runId: string };
    expect(started.runs[0]!.view.status).toBe("running");

    const sent = await githubDelivery("route-2", { to: "reviews", action: "review", runId, review: { ok: true } });
    expect(sent.status).toBe(200);
    expect(await sent.json()).toEqual({ delivery: "route-2", runId, sent: "review" });
    expect(await started.runs[0]!.result()).toEqual({ name: "review", payload: { ok: true } });

    const ignored = await githubDelivery("route-3", { to: "reviews", action: "closed" });
    expect(await ignored.json()).toEqual({ delivery: "route-3", ignored: true });
    expect(ignored.runs).toHaveLength(0);
  });
});

describe("a route that answers no decision", () => {
  it("answers 400 invalid_input naming what route must answer, and starts nothing", async () => {
    const response = await githubDelivery("broken-1", { to: "broken" });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error).toEqual({
      code: "invalid_input",
      message: 'webhook "broken": route must answer { start }, { send } or null',
    });
    expect(response.runs).toHaveLength(0);
  });
});

describe("what is not a delivery", () => {
  it.each([
    { name: "an unknown endpoint", method: "POST", path: "/__platform/webhooks/nope", status: 404 },
    { name: "a GET of a known endpoint", method: "GET", path: "/__platform/webhooks/stripe-orders", status: 404 },
    { name: "a path below an endpoint", method: "POST", path: "/__platform/webhooks/stripe-orders/x", status: 404 },
    { name: "another /__platform path (internal)", method: "POST", path: "/__platform/metadata", status: 404 },
  ])("$name answers $status, not the project", async ({ method, path, status }) => {
    const response = await testRequest(project, path, {
      method,
      env: ENV,
      ...(method === "POST" ? { body: "{}" } : {}),
    });
    expect(response.status).toBe(status);
    expect(await response.text()).not.toContain("the project's own answer");
  });

  it("a body over 1 MiB answers 413 and starts nothing", async () => {
    const response = await post("/__platform/webhooks/stripe-orders", "x".repeat(1024 * 1024 + 1), {});
    expect(response.status).toBe(413);
    expect(response.runs).toHaveLength(0);
  });

  it("a verified body that is not JSON answers 400 and starts nothing", async () => {
    const body = "not json";
    const response = await post("/__platform/webhooks/github-pushes", body, {
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, body),
      "x-github-delivery": "gh-not-json",
    });
    expect(response.status).toBe(400);
    expect(response.runs).toHaveLength(0);
  });
});
