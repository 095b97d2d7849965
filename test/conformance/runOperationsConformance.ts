import { describe, expect, it, vi } from "vitest";
import { NonRetryableError } from "#src/engine/execution/nonRetryableError.ts";
import { installWorkflowBackend, resetWorkflowsForTests, workflow } from "#src/engine/api/workflowApi.ts";
import type { MakeWorkflowBackend } from "#test/conformance/workflowConformance.ts";
import { pollingGates, useBackendUnderTest } from "#test/conformance/workflowConformance.fixture.ts";
import { rejection } from "#test/support/workflow/rejection.ts";

/**
 * Beyond the spec, on every backend: operating many runs and over time
 * (search, pause and resume, rerun from a step, bulk cancel and rerun,
 * retention, renamed steps and the stranded-runs check), with the races the issue
 * names: pause vs step commit, cancelMany vs runs finishing, rerun of a run
 * that is still running, the stranded-runs check vs a run moving on.
 */

type RunView = NonNullable<Awaited<ReturnType<typeof workflow.get>>>;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function shape(events: RunView["events"]): string[] {
  return events.map(({ type, payload }) => {
    const p = payload as Record<string, unknown>;
    if (type === "step_started") return `step_started(${p.step},${p.attempt})`;
    if (type === "step_completed")
      return p.next_step === undefined ? `step_completed(${p.step})` : `step_completed(${p.step}->${p.next_step})`;
    if (type === "step_failed") return `step_failed(${p.step},${p.attempt},${p.retryable ? "retryable" : "final"})`;
    if (type === "event_received") return `event_received(${p.name})`;
    return type;
  });
}

async function viewWhen(runId: string, check: (view: RunView) => boolean): Promise<RunView> {
  let seen: RunView | null = null;
  await vi.waitFor(
    async () => {
      seen = await workflow.get(runId);
      if (!seen || !check(seen)) throw new Error(`not yet: ${seen?.status} ${shape(seen?.events ?? []).join(", ")}`);
    },
    { timeout: 8000, interval: 5 },
  );
  return seen as unknown as RunView;
}

/** Run ids of a list, once the index agrees (the Durable Object index learns from reports). */
async function idsWhen(filter: Parameters<typeof workflow.list>[0], expected: string[]): Promise<void> {
  await vi.waitFor(
    async () => {
      const ids = (await workflow.list(filter)).runs.map((r) => r.id);
      expect(new Set(ids)).toEqual(new Set(expected));
      expect(ids).toHaveLength(expected.length);
    },
    { timeout: 8000, interval: 10 },
  );
}

export function describeRunOperationsConformance(name: string, makeBackend: MakeWorkflowBackend): void {
  describe(`workflow conformance, run operations: ${name}`, () => {
    /** Which steps ran, `${workflowId}:${step}` (steps run in this isolate on every backend). */
    const ran: string[] = [];
    let chargeFixed = false;
    const restart = () => underTest.restart();

    /** Version 1 of the code; each test may replace it with a later one (see `redeploy`). */
    const registerAll = () => {
      workflow(
        "checkout",
        {
          start: async (ctx) => {
            ran.push(`${ctx.workflowId}:start`);
            ctx.write("cart", ctx.data.cart);
            return { step: "charge" };
          },
          charge: async (ctx) => {
            ran.push(`${ctx.workflowId}:charge`);
            if (ctx.data.fail && !chargeFixed) throw new NonRetryableError(`card_declined for cart ${ctx.data.cart}`);
            return { done: true, result: { cart: ctx.scratchpad.cart } };
          },
        },
        { stepTimeoutMS: 10_000 },
      );
      workflow(
        "held",
        {
          start: async (ctx) => {
            await gates.wait(ctx.workflowId);
            ctx.write("held", true);
            return { step: "next" };
          },
          next: async (ctx) => ({ done: true, result: ctx.scratchpad.held }),
        },
        { stepTimeoutMS: 10_000 },
      );
      workflow("nap", {
        start: async (ctx) => ({ step: "woke", sleepMS: ctx.data?.sleepMS ?? 100 }),
        woke: async () => ({ done: true, result: "woke" }),
      });
      workflow("approve-flow", {
        start: async () => ({ step: "approve", waitFor: "ok" }),
        approve: async (ctx) => ({ done: true, result: ctx.event?.payload ?? null }),
      });
      workflow("short-lived", { start: async () => ({ done: true, result: 1 }) }, { retentionMS: 1000 });
    };

    /** A new version of the code: the registry holds only `register`'s workflows. */
    const redeploy = (register: () => void) => {
      resetWorkflowsForTests();
      register();
      installWorkflowBackend(underTest.subject.backend);
    };

    const gates = pollingGates();
    const underTest = useBackendUnderTest(makeBackend, gates, () => {
      ran.length = 0;
      chargeFixed = false;
      registerAll();
    });

    /** `total` checkout runs, the first `failing` of them failing in charge; answers their ids by outcome. */
    async function checkouts(total: number, failing: number): Promise<{ failed: string[]; completed: string[] }> {
      const failed: string[] = [];
      const completed: string[] = [];
      for (let i = 0; i < total; i++) {
        const run = await workflow.start("checkout", { cart: `c${i}`, fail: i < failing });
        (i < failing ? failed : completed).push(run.id);
      }
      for (const id of [...failed, ...completed]) await viewWhen(id, (v) => v.status !== "running");
      return { failed, completed };
    }

    describe("search", () => {
      it("filters by status and step, error substring, id prefix and start time; newest first; refuses unknown fields", async () => {
        const { failed, completed } = await checkouts(5, 2);
        await idsWhen({ status: "failed", step: "charge" }, failed);
        await idsWhen({ name: "checkout", status: "completed", step: "charge" }, completed);
        await idsWhen({ error: "card_declined for cart c1" }, [failed[1]!]);
        await idsWhen({ error: "card_declined" }, failed);
        await idsWhen({ error: "no such text" }, []);
        const target = completed[0]!;
        await idsWhen({ idPrefix: target.slice(0, -1) }, [target]);

        const all = (await workflow.list({ name: "checkout" })).runs;
        expect(all.map((r) => r.createdAt)).toEqual([...all.map((r) => r.createdAt)].sort((a, b) => b - a));
        const since = all[2]!.createdAt;
        const expected = all.filter((r) => r.createdAt >= since).map((r) => r.id);
        await idsWhen({ name: "checkout", since }, expected);
        await idsWhen(
          { name: "checkout", until: since },
          all.filter((r) => r.createdAt < since).map((r) => r.id),
        );
        const failedRun = (await workflow.list({ idPrefix: failed[0]! })).runs[0];
        expect(failedRun).toMatchObject({ status: "failed", step: "charge", error: "card_declined for cart c0" });

        for (const filter of [{ stauts: "failed" }, { status: "stuck" }, { since: -1 }, { version: "3" }])
          expect((await rejection(workflow.list(filter as never))).code).toBe("invalid_input");
      });

      it("pages a filtered list with a cursor, newest first, without repeats", async () => {
        const { failed } = await checkouts(5, 5);
        await idsWhen({ status: "failed" }, failed);
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await workflow.list({
            status: "failed",
            step: "charge",
            limit: 2,
            ...(cursor ? { cursor } : {}),
          });
          expect(page.runs.length).toBeLessThanOrEqual(2);
          seen.push(...page.runs.map((r) => r.id));
          cursor = page.cursor;
        } while (cursor);
        expect(new Set(seen)).toEqual(new Set(failed));
        expect(seen).toHaveLength(failed.length);
      });
    });

    describe("pause and resume", () => {
      it("a sleep that falls due while paused takes effect on resume; status paused; pause and resume refuse the wrong state", async () => {
        const run = await workflow.start("nap", { sleepMS: 50 });
        await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        const paused = await workflow.pause(run.id, "investigating");
        expect(paused).toMatchObject({ status: "paused", paused: { reason: "investigating" } });
        expect(paused.events.at(-1)).toMatchObject({ type: "workflow_paused", payload: { reason: "investigating" } });
        expect((await rejection(workflow.pause(run.id))).code).toBe("conflict");
        await pause(150);
        const still = (await workflow.get(run.id)) as RunView;
        expect(still.status).toBe("paused");
        expect(shape(still.events)).toEqual([
          "workflow_created",
          "step_started(start,1)",
          "step_completed(start->woke)",
          "workflow_paused",
        ]);
        await idsWhen({ status: "paused", name: "nap" }, [run.id]);

        const resumed = await workflow.resume(run.id);
        expect(resumed.events.map((e) => e.type)).toContain("workflow_resumed");
        const done = await viewWhen(run.id, (v) => v.status === "completed");
        expect(shape(done.events).slice(3)).toEqual([
          "workflow_paused",
          "workflow_resumed",
          "step_started(woke,1)",
          "step_completed(woke)",
          "workflow_completed",
        ]);
        expect((await rejection(workflow.resume(run.id))).code).toBe("conflict");
        expect((await rejection(workflow.pause(run.id))).code).toBe("conflict");
        expect((await rejection(workflow.pause("no-such-run"))).code).toBe("not_found");
      });

      it("pause vs step commit: the step in flight is committed, the next one is not claimed until resume", async () => {
        const run = await workflow.start("held", null, { id: "held-pause" });
        await viewWhen(run.id, (v) => v.events.at(-1)?.type === "step_started");
        await workflow.pause(run.id, "hold on");
        gates.open("held-pause");
        const view = await viewWhen(run.id, (v) => v.events.some((e) => e.type === "step_completed"));
        await pause(50);
        const after = (await workflow.get(run.id)) as RunView;
        expect(after.status).toBe("paused");
        expect(shape(after.events)).toEqual(shape(view.events));
        expect(shape(after.events).filter((s) => s.startsWith("step_"))).toEqual([
          "step_started(start,1)",
          "step_completed(start->next)",
        ]);
        await workflow.resume(run.id);
        expect((await viewWhen(run.id, (v) => v.status === "completed")).result).toBe(true);
      });

      it("a paused run stays paused across a restart and completes after resume", async () => {
        const run = await workflow.start("nap", { sleepMS: 30 });
        await viewWhen(run.id, (v) => v.wakeAt !== undefined);
        await workflow.pause(run.id);
        await restart();
        await pause(100);
        expect(await workflow.get(run.id)).toMatchObject({ status: "paused" });
        await workflow.resume(run.id);
        expect((await viewWhen(run.id, (v) => v.status === "completed")).result).toBe("woke");
      });
    });

    describe("rerun", () => {
      it("from a step: the copied completions keep the scratchpad, the first claimed step is fromStep, both runs link", async () => {
        const { failed } = await checkouts(1, 1);
        const original = failed[0]!;
        chargeFixed = true;
        ran.length = 0;
        const rerun = await workflow.rerun(original, { fromStep: "charge" });
        expect(rerun.id).not.toBe(original);
        expect(await rerun.result()).toEqual({ cart: "c0" });
        const view = (await workflow.get(rerun.id)) as RunView;
        expect(view.rerunOf).toEqual({ runId: original, fromStep: "charge" });
        expect(shape(view.events)).toEqual([
          "workflow_created",
          "step_completed(start->charge)",
          "step_started(charge,1)",
          "step_completed(charge)",
          "workflow_completed",
        ]);
        expect(view.events[1]?.payload).toMatchObject({ writes: { cart: "c0" }, copied_from_seq: 3 });
        // start's side effects are not done again.
        expect(ran.filter((r) => r.endsWith(":start"))).toEqual([]);
        await idsWhen({ rerunOf: original }, [rerun.id]);
      });

      it("from the start: same data, every step again; refuses a live run, an unknown step and one never reached", async () => {
        const { failed } = await checkouts(1, 1);
        const again = await workflow.rerun(failed[0]!);
        expect((await rejection(again.result())).code).toBe("workflow_failed");
        const view = (await workflow.get(again.id)) as RunView;
        expect(view.rerunOf).toEqual({ runId: failed[0] });
        expect(shape(view.events).slice(0, 2)).toEqual(["workflow_created", "step_started(start,1)"]);

        const live = await workflow.start("held", null, { id: "held-live" });
        await viewWhen(live.id, (v) => v.events.at(-1)?.type === "step_started");
        expect((await rejection(workflow.rerun(live.id))).code).toBe("conflict");
        expect((await rejection(workflow.rerun(failed[0]!, { fromStep: "refund" }))).code).toBe("invalid_input");
        expect((await rejection(workflow.rerun("no-such-run"))).code).toBe("not_found");
        const skipped = await rejection(workflow.rerun(failed[0]!, { fromStep: "charge", extra: 1 } as never));
        expect(skipped.code).toBe("invalid_input");
      });
    });

    describe("bulk operations", () => {
      it("rerunMany from a step reruns exactly the failed runs; an empty filter is refused", async () => {
        const { failed } = await checkouts(6, 3);
        await idsWhen({ status: "failed", step: "charge" }, failed);
        expect((await rejection(workflow.rerunMany({}))).code).toBe("invalid_input");
        expect((await rejection(workflow.cancelMany({ limit: 5 } as never))).code).toBe("invalid_input");
        chargeFixed = true;
        ran.length = 0;
        expect(await workflow.rerunMany({ status: "failed" }, { fromStep: "charge" })).toEqual({
          matched: 3,
          affected: 3,
        });
        for (const original of failed) {
          await vi.waitFor(async () => expect((await workflow.list({ rerunOf: original })).runs).toHaveLength(1), {
            timeout: 8000,
            interval: 10,
          });
          const [rerun] = (await workflow.list({ rerunOf: original })).runs;
          const view = await viewWhen(rerun!.id, (v) => v.status === "completed");
          expect(shape(view.events).slice(1, 3)).toEqual(["step_completed(start->charge)", "step_started(charge,1)"]);
        }
        expect(ran.filter((r) => r.endsWith(":start"))).toEqual([]);
      });

      it("cancelMany vs runs finishing: each matched run is either cancelled (and counted) or finished on its own", async () => {
        const ids: string[] = [];
        for (let i = 0; i < 4; i++) ids.push((await workflow.start("held", null, { id: `bulk-${i}` })).id);
        for (const id of ids) await viewWhen(id, (v) => v.events.at(-1)?.type === "step_started");
        await idsWhen({ name: "held" }, ids);
        gates.open("bulk-0");
        gates.open("bulk-1");
        const result = await workflow.cancelMany({ name: "held" }, { reason: "bulk stop" });
        expect(result.matched).toBe(4);
        const views = await Promise.all(ids.map((id) => viewWhen(id, (v) => v.status !== "running")));
        const cancelled = views.filter((v) => v.status === "cancelled");
        expect(result.affected).toBe(cancelled.length);
        expect(views.every((v) => v.status === "cancelled" || v.status === "completed")).toBe(true);
        // The two whose gates stayed shut could only end by the bulk cancel.
        expect(cancelled.map((v) => v.id)).toEqual(expect.arrayContaining([ids[2], ids[3]]));
        for (const view of cancelled) expect(view.cancelReason).toBe("bulk stop");
      });
    });

    describe("retention", () => {
      it("a finished run is gone (get null, not listed) after its retention and a sweep; a live run stays", async () => {
        const run = await workflow.start("short-lived");
        expect(await run.result()).toBe(1);
        const live = await workflow.start("nap", { sleepMS: 60_000 });
        await viewWhen(live.id, (v) => v.wakeAt !== undefined);
        await idsWhen({ name: "short-lived" }, [run.id]);
        expect((await workflow.list({ name: "short-lived" })).runs[0]?.expiresAt).toEqual(expect.any(Number));
        await underTest.subject.sweep();
        expect(await workflow.get(run.id)).not.toBeNull();
        await pause(1100);
        await underTest.subject.sweep();
        expect(await workflow.get(run.id)).toBeNull();
        expect((await workflow.list({ name: "short-lived" })).runs).toEqual([]);
        expect(await workflow.get(live.id)).toMatchObject({ status: "running" });
      });
    });

    describe("renamed steps and the stranded-runs check", () => {
      const version2 = (renamed: boolean) => () =>
        workflow(
          "approve-flow",
          {
            start: async () => ({ step: "approval", waitFor: "ok" }),
            approval: async (ctx) => ({ done: true, result: { approvedBy: ctx.event?.payload ?? null } }),
          },
          renamed ? { renamed: { approve: "approval" } } : {},
        );

      it("names the live runs a change would strand; renamed keeps them; the check follows a run that moves on", async () => {
        const run = await workflow.start("approve-flow");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        const next = [{ name: "approve-flow", steps: ["start", "approval"] }];
        await vi.waitFor(
          async () =>
            expect(await underTest.subject.backend.findStrandedRuns(next)).toEqual({
              count: 1,
              runs: [{ runId: run.id, workflow: "approve-flow", step: "approve", status: "running", missing: "step" }],
            }),
          { timeout: 8000, interval: 10 },
        );
        expect(
          await underTest.subject.backend.findStrandedRuns([{ ...next[0]!, renamed: { approve: "approval" } }]),
        ).toEqual({
          count: 0,
          runs: [],
        });
        expect((await underTest.subject.backend.findStrandedRuns([])).runs[0]).toMatchObject({
          runId: run.id,
          missing: "workflow",
        });

        await workflow.send(run.id, "ok", "ada");
        await viewWhen(run.id, (v) => v.status === "completed");
        await vi.waitFor(
          async () => expect(await underTest.subject.backend.findStrandedRuns(next)).toEqual({ count: 0, runs: [] }),
          {
            timeout: 8000,
            interval: 10,
          },
        );
      });

      it("with renamed, a run that names the old step goes on with the new one", async () => {
        const run = await workflow.start("approve-flow");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        redeploy(version2(true));
        await workflow.send(run.id, "ok", "ada");
        const view = await viewWhen(run.id, (v) => v.status === "completed");
        expect(view.result).toEqual({ approvedBy: "ada" });
        expect(shape(view.events).slice(-3)).toEqual([
          "step_started(approval,1)",
          "step_completed(approval)",
          "workflow_completed",
        ]);
      });

      it("forced: a stranded run fails at the next sweep with a reason naming the step, without waiting for its event", async () => {
        const run = await workflow.start("approve-flow");
        await viewWhen(run.id, (v) => v.waitingFor !== undefined);
        redeploy(version2(false));
        await underTest.subject.sweep();
        const view = await viewWhen(run.id, (v) => v.status === "failed");
        expect(view.error).toContain('has no step "approve"');
      });
    });
  });
}
