/**
 * Issue 34: a run `reserve → charge → ship` whose `ship` fails for good rolls back `charge` then
 * `reserve`; a SIGKILL of `platform dev` after charge's rollback committed and while reserve's runs
 * loses nothing and redoes nothing committed: charge's rollback is never run again, reserve's
 * interrupted attempt is retried after the restart, and each rollback completes exactly once.
 * The handlers report to a ledger served by this test process, outside the platform.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  devBackends,
  initProject,
  killedAfterEach,
  killTree,
  RUN_ROUTES,
  startDev,
  startRuns,
  useWorkDir,
  waitForRuns,
} from "#test/support/e2e/index.ts";

// Ports of this file: 8962 (workerd), 8963 (Node).
const work = useWorkDir("platform-e2e-rollback-crash-");
const running = killedAfterEach();

const PROJECT = `import { Router } from "itty-router";
import { workflow, NonRetryableError } from "platform";

const tell = (ctx, what) => fetch(ctx.data.ledger + "/" + ctx.runId + "/" + what + "/" + ctx.attempt, { method: "POST" });

workflow("order", {
  start: async () => ({ step: "reserve" }),
  reserve: async (ctx) => { ctx.write("reservation", "R-1"); return { step: "charge" }; },
  charge: async (ctx) => { ctx.write("charge", "ch_1"); return { step: "ship" }; },
  ship: async () => { throw new NonRetryableError("out of stock"); },
}, {
  rollback: {
    charge: async (ctx) => { await tell(ctx, "refund-" + ctx.output.charge); },
    reserve: async (ctx) => { await tell(ctx, "release-" + ctx.output.reservation); },
  },
  rollbackOptions: { maxAttempts: 3, backoff: { initialMS: 50, maxMS: 200, factor: 2 } },
});
${RUN_ROUTES}`;

/** What the handlers told, in order; each run's first release is held unanswered until the platform is killed. */
const told: string[] = [];
let heldRelease: ((seen: string) => void) | undefined;
const server = createServer((request: IncomingMessage, response: ServerResponse) => {
  const entry = request.url ?? "";
  told.push(entry);
  if (entry.includes("/release-") && entry.endsWith("/1")) {
    heldRelease?.(entry);
    return;
  }
  response.end("ok");
});
let ledger = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  ledger = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe.each(devBackends(8962))("rollbacks survive SIGKILL of %s", (_backend, flags, port) => {
  it("charge's rollback runs once, reserve's interrupted attempt is retried, each completes exactly once", async () => {
    const dir = path.join(work, `order-${port}`);
    await initProject(dir, PROJECT);
    const args = [dir, ...flags, "--port", String(port)];

    const releaseSeen = new Promise<string>((resolve) => (heldRelease = resolve));
    const first = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(first);
    const [runId] = await startRuns(first.url, "order", 1, { ledger });
    // Reserve's rollback is under way (its report is held): charge's rollback_completed is committed.
    expect(await releaseSeen).toBe(`/${runId}/release-R-1/1`);
    await killTree(first.child.pid!);

    const second = await startDev(args, { readyTimeoutMs: 60_000 });
    running.push(second);
    const [run] = await waitForRuns(second.url, [runId!], 60_000);
    const log = run!.events.map((e) =>
      e.type.startsWith("rollback")
        ? `${e.type}(${e.payload.step},${e.payload.attempt ?? ""}${e.payload.reason ? `,${e.payload.reason}` : ""})`
        : e.type,
    );
    expect(run!.status, log.join("\n")).toBe("failed");
    expect(run!.error).toBe("out of stock");
    expect(log.slice(-8)).toEqual([
      "step_failed",
      "rollback_started(charge,1)",
      "rollback_completed(charge,)",
      "rollback_started(reserve,1)",
      "rollback_failed(reserve,1,interrupted)",
      "rollback_started(reserve,2)",
      "rollback_completed(reserve,)",
      "workflow_failed",
    ]);
    expect((run as unknown as { rolledBack: string[] }).rolledBack).toEqual(["charge", "reserve"]);
    // The ledger: the refund once; the release told twice (the interrupted attempt, then its retry).
    expect(told.filter((entry) => entry.startsWith(`/${runId}/`))).toEqual([
      `/${runId}/refund-ch_1/1`,
      `/${runId}/release-R-1/1`,
      `/${runId}/release-R-1/2`,
    ]);
    expect((await second.stop("SIGTERM")).code).toBe(0);
  });
});
