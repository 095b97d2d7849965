import { afterEach, describe, expect, it } from "vitest";
import { auth, chatserver, webhook, workflow, workspace } from "platform";
import { resetWorkflowsForTests } from "#src/engine/api/workflowApi.ts";
import { DEFAULT_SESSION_SECONDS } from "#src/contracts/signInSessions.ts";
import type { PlatformEnv } from "#src/runtime/entry/platformEnv.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";

// Test files that share one module graph (`isolate: false`) import `platform` once; what one file
// registered at top level must not be there for the next, and the next must be able to register
// the same names again through the same, already-installed capabilities.
afterEach(() => platformRuntime.forgetRegistrations());

const steps = { start: async () => ({ done: true as const }) };

describe("platformRuntime.forgetRegistrations()", () => {
  it.each([
    {
      what: "a workflow with a schedule, and its crons",
      register: () => workflow("nightly", steps, { schedule: "0 3 * * *" }),
      registered: {
        workflows: [expect.objectContaining({ name: "nightly" })],
        crons: [
          { name: "__workflow-recovery", schedule: "* * * * *" },
          expect.objectContaining({ schedule: "0 3 * * *" }),
        ],
      },
      forgotten: { workflows: [], crons: [] },
    },
    {
      what: "a webhook",
      register: () => webhook("orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" }),
      registered: { webhooks: [expect.objectContaining({ name: "orders" })] },
      forgotten: { webhooks: [] },
    },
    {
      what: "a chat-server command",
      register: () => chatserver.onCommand("deploy", () => "ok"),
      registered: { plugins: { chatserver: { commands: [{ name: "deploy" }], events: [] } } },
      forgotten: { plugins: { chatserver: { commands: [], events: [] } } },
    },
    {
      what: "a workspace event handler",
      register: () => workspace.onEvent("message", () => undefined),
      registered: { plugins: { workspace: { events: ["message"] } } },
      forgotten: { plugins: { workspace: { events: [] } } },
    },
    {
      what: "the sign-in settings",
      register: () => auth.allow({ domains: ["example.com"], sessionMaxAge: 3600 }),
      registered: { auth: { domains: ["example.com"], sessionMaxAge: 3600 } },
      forgotten: { auth: { domains: null, sessionMaxAge: DEFAULT_SESSION_SECONDS } },
    },
  ])("forgets $what, and the same registration works again", ({ register, registered, forgotten }) => {
    register();
    expect(platformRuntime.metadata()).toMatchObject(registered);

    platformRuntime.forgetRegistrations();
    expect(platformRuntime.metadata()).toMatchObject(forgotten);

    register();
    expect(platformRuntime.metadata()).toMatchObject(registered);
  });

  it("forgets the environment, so the next one reinstalls the capabilities' backends", () => {
    const env = { PLATFORM_PROJECT: "p" } as unknown as PlatformEnv;
    platformRuntime.useEnv(env);
    expect(platformRuntime.env).toBe(env);

    platformRuntime.forgetRegistrations();
    expect(platformRuntime.env).toBeNull();
  });

  it("gives the workflow capability its cron registrar back after an engine test's resetWorkflowsForTests()", () => {
    resetWorkflowsForTests();
    platformRuntime.forgetRegistrations();
    workflow("hourly", steps, { schedule: "0 * * * *" });
    expect(platformRuntime.metadata().crons).toEqual([
      { name: "__workflow-recovery", schedule: "* * * * *" },
      expect.objectContaining({ schedule: "0 * * * *" }),
    ]);
  });

  it("without it, a second registration of a name is refused (what the next file would hit)", () => {
    workflow("twice", steps);
    expect(() => workflow("twice", steps)).toThrow('A workflow named "twice" is already registered');
  });
});
