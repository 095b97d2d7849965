/**
 * Callback URLs (beyond the spec), every backend: `ctx.callbackURL(event)` asks the host to sign a
 * grant for this run, and a delivery with the URL's id (what the platform's route does after checking
 * the token) appends `event_received { via: "callback" }` once: the event itself spends the id, in the
 * run's own log, so a second delivery, one after a restart, and one to an ended run are `conflict`.
 * The signing and the HTTP answers are the runtime's (test/runtime/workflow/callbackRoute.workerd.test.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isPlatformError } from "#src/core/errors.ts";
import {
  type CallbackLinkGrant,
  DEFAULT_CALLBACK_LINK_TTL_MS,
  setCallbackLinkIssuer,
} from "#src/engine/control/callbackLink.ts";
import { installedWorkflowBackend, workflow } from "#src/engine/api/workflowApi.ts";
import {
  eventOf,
  type MakeWorkflowBackend,
  pollingGates,
  type RunView,
  useBackendUnderTest,
  viewOf,
  viewWhen,
} from "./workflowConformance.fixture.ts";

/** The URL was issued `ttlMS` before its expiry, on the host's clock: while step "start" ran. */
function expectIssuedDuringStart(view: RunView, issuedAt: number): void {
  expect(issuedAt).toBeGreaterThanOrEqual(eventOf(view, "step_started", "start").at);
  expect(issuedAt).toBeLessThanOrEqual(eventOf(view, "step_completed", "start").at);
}

/** What a delivery rejects with: its code and message, or "delivered". */
async function deliver(runId: string, name: string, payload: unknown, callbackId: string) {
  try {
    await installedWorkflowBackend()?.send(runId, name, payload as never, callbackId);
    return "delivered";
  } catch (error) {
    return { code: isPlatformError(error) ? error.code : String(error), message: (error as Error).message };
  }
}

export function describeCallbackConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, callback URLs: ${name}`, () => {
    const gates = pollingGates();
    const granted: CallbackLinkGrant[] = [];
    beforeEach(() => {
      granted.length = 0;
      setCallbackLinkIssuer(async (grant) => {
        granted.push(grant);
        return `https://project.example/cb/${grant.runId}/${grant.event}`;
      });
    });
    afterEach(() => setCallbackLinkIssuer(null));
    const host = useBackendUnderTest(makeBackend, gates, () => {
      workflow("approve", {
        start: async (ctx) => {
          const url = await ctx.callbackURL("approval", ctx.data?.ttlMS ? { ttlMS: ctx.data.ttlMS } : undefined);
          ctx.write("url", url);
          return { step: "decide", waitFor: "approval" };
        },
        decide: async (ctx) => ({ done: true, result: { url: ctx.scratchpad.url, event: ctx.event } }),
      });
      workflow("two", {
        start: async () => ({ step: "second", waitFor: "a" }),
        second: async () => ({ step: "end", waitFor: "b" }),
        end: async (ctx) => ({ done: true, result: ctx.event }),
      });
      workflow("asks", {
        start: async (ctx) => {
          try {
            await ctx.callbackURL(ctx.data.event, ctx.data.options);
          } catch (error) {
            return { done: true, result: isPlatformError(error) ? error.code : "?" };
          }
          return { done: true, result: "issued" };
        },
      });
    });

    it("a step's URL is granted for its run and event, 7 days by default; a delivery completes the wait with the payload, marked via callback", async () => {
      const run = await workflow.start("approve", {});
      const waiting = await viewWhen(run.id, (v) => v.waitingFor?.name === "approval");
      expect(granted).toEqual([{ runId: run.id, event: "approval", expiresAt: expect.any(Number) }]);
      expectIssuedDuringStart(waiting, (granted[0]?.expiresAt ?? 0) - DEFAULT_CALLBACK_LINK_TTL_MS);
      expect(await deliver(run.id, "approval", { ok: true, by: "ada" }, "spent-once-0000000000a")).toBe("delivered");
      const done = await viewWhen(run.id, (v) => v.status === "completed");
      expect(done.result).toEqual({
        url: `https://project.example/cb/${run.id}/approval`,
        event: { name: "approval", payload: { ok: true, by: "ada" } },
      });
      expect(eventOf(done, "event_received").payload).toEqual({
        name: "approval",
        payload: { ok: true, by: "ada" },
        via: "callback",
        callback: "spent-once-0000000000a",
      });
    });

    it("ttlMS sets the expiry", async () => {
      const run = await workflow.start("approve", { ttlMS: 60_000 });
      const waiting = await viewWhen(run.id, (v) => v.waitingFor?.name === "approval");
      expectIssuedDuringStart(waiting, (granted[0]?.expiresAt ?? 0) - 60_000);
    });

    it("one id delivers once: a second delivery is conflict while the run lives, after a restart, and once it ended", async () => {
      const run = await workflow.start("two", {});
      await viewWhen(run.id, (v) => v.waitingFor?.name === "a");
      expect(await deliver(run.id, "a", 1, "id-a")).toBe("delivered");
      await viewWhen(run.id, (v) => v.waitingFor?.name === "b");
      const again = await deliver(run.id, "a", 2, "id-a");
      expect(again).toMatchObject({ code: "conflict", message: expect.stringContaining("already used") });
      await host.restart();
      expect(await deliver(run.id, "a", 3, "id-a")).toMatchObject({ code: "conflict" });
      // Another URL's id is another delivery.
      expect(await deliver(run.id, "b", "last", "id-b")).toBe("delivered");
      const done = await viewWhen(run.id, (v) => v.status === "completed");
      expect(done.result).toEqual({ name: "b", payload: "last" });
      expect(await deliver(run.id, "b", "late", "id-b")).toMatchObject({ code: "conflict" });
      expect(await deliver(run.id, "b", "late", "id-c")).toMatchObject({
        code: "conflict",
        message: expect.stringContaining("already completed"),
      });
      expect((await viewOf(run.id)).events.filter((e) => e.type === "event_received")).toHaveLength(2);
    });

    it("an unknown run is not_found; a bad payload is refused and spends nothing", async () => {
      expect(await deliver("no-such-run", "a", 1, "id-x")).toMatchObject({ code: "not_found" });
      const run = await workflow.start("two", {});
      await viewWhen(run.id, (v) => v.waitingFor?.name === "a");
      expect(await deliver(run.id, "a", "x".repeat(2 * 1024 * 1024), "id-big")).toMatchObject({
        code: "payload_too_large",
      });
      expect(await deliver(run.id, "a", "small", "id-big")).toBe("delivered");
    });

    it.each([
      ["an empty event name", { event: "" }, "invalid_input"],
      ["the reserved prefix of a run's end", { event: "__run_ended/x" }, "invalid_input"],
      ["a ttl over 30 days", { event: "a", options: { ttlMS: 31 * 86_400_000 } }, "invalid_input"],
      ["a ttl of 0", { event: "a", options: { ttlMS: 0 } }, "invalid_input"],
      ["an unknown option", { event: "a", options: { ttl: 5 } }, "invalid_input"],
      ["a good request", { event: "a", options: { ttlMS: 1000 } }, "issued"],
    ])("ctx.callbackURL with %s", async (_case, data, expected) => {
      const run = await workflow.start("asks", data);
      expect((await viewWhen(run.id, (v) => v.status === "completed")).result).toBe(expected);
    });
  });
}
