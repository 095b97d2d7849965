import { describe, expect, it } from "vitest";
import { registerWebhook, webhookEndpoint, webhookMetadata } from "../../../src/runtime/webhooks/webhookEndpoints.ts";

describe("webhook(name, options): registration", () => {
  it("records an endpoint and reports it in the build metadata (the secret's name, never a key)", () => {
    registerWebhook("orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });
    registerWebhook("pushes", { verify: "github", secret: "GITHUB_SECRET", route: () => null });
    expect(webhookEndpoint("orders")).toMatchObject({ verify: "stripe", start: "fulfil" });
    expect(webhookMetadata()).toEqual([
      {
        name: "orders",
        path: "/__platform/webhooks/orders",
        verify: "stripe",
        secret: "STRIPE_WEBHOOK_SECRET",
        start: "fulfil",
      },
      { name: "pushes", path: "/__platform/webhooks/pushes", verify: "github", secret: "GITHUB_SECRET" },
    ]);
  });

  it.each([
    {
      why: "a name with a slash",
      name: "a/b",
      options: { verify: "github", secret: "S", start: "w" },
      message: /webhook name must be/,
    },
    {
      why: "an uppercase name",
      name: "Orders",
      options: { verify: "github", secret: "S", start: "w" },
      message: /webhook name must be/,
    },
    {
      why: "a name registered twice",
      name: "orders",
      options: { verify: "github", secret: "S", start: "w" },
      message: /registered twice/,
    },
    { why: "no options", name: "x1", options: undefined, message: /needs options/ },
    {
      why: "an unknown scheme",
      name: "x2",
      options: { verify: "paypal", secret: "S", start: "w" },
      message: /verify must be one of stripe, github, standard, slack, discord/,
    },
    {
      why: "a secret value instead of its name",
      name: "x3",
      options: { verify: "stripe", secret: "whsec_abc/+=", start: "w" },
      message: /secret must name a project secret/,
    },
    {
      why: "a PLATFORM_ secret",
      name: "x4",
      options: { verify: "stripe", secret: "PLATFORM_WORKER_SECRET", start: "w" },
      message: /secret must name a project secret/,
    },
    {
      why: "both start and route",
      name: "x5",
      options: { verify: "github", secret: "S", start: "w", route: () => null },
      message: /exactly one of start/,
    },
    {
      why: "neither start nor route",
      name: "x6",
      options: { verify: "github", secret: "S" },
      message: /exactly one of start/,
    },
    {
      why: "route that is not a function",
      name: "x7",
      options: { verify: "github", secret: "S", route: "w" },
      message: /route must be a function/,
    },
    {
      why: "an unknown option",
      name: "x8",
      options: { verify: "github", secret: "S", start: "w", tolerance: 1 },
      message: /unknown option\(s\) tolerance/,
    },
  ])("refuses $why with invalid_input", ({ name, options, message }) => {
    expect(() => registerWebhook(name, options)).toThrow(
      expect.objectContaining({ code: "invalid_input", message: expect.stringMatching(message) }),
    );
  });
});
