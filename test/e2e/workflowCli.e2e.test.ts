import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DevProcess,
  initProject,
  removeWorkDir,
  RETRIED_TWO_STEP_RUN,
  RUN_ROUTES,
  type RunView,
  runCli,
  startDev,
  startRuns,
  waitForRuns,
} from "#test/support/e2e/index.ts";

// Ports of this file: 8895 (workerd), 8886 (Node).
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-wfcli-"));
const dir = path.join(work, "orders");

const ORDERS_PROJECT = `import { Router } from "itty-router";
import { NonRetryableError, workflow } from "platform";

workflow("greet", {
  start: async (ctx) => ({ done: true, result: { hello: ctx.data.name } }),
});
workflow(
  "checkout",
  {
    start: async (ctx) => {
      if (ctx.attempt === 1) throw new Error("card declined, try again");
      ctx.write("charged", true);
      return { step: "ship" };
    },
    ship: async () => ({ done: true, result: "shipped" }),
  },
  { maxAttempts: 3, backoff: { initialMS: 30, maxMS: 100, factor: 2 } },
);
workflow("doomed", {
  start: async () => {
    throw new NonRetryableError("the address does not exist");
  },
});
workflow("approve", {
  start: async () => ({ step: "approved", waitFor: "approval" }),
  approved: async (ctx) => ({ done: true, result: ctx.event }),
});
workflow("nap", {
  start: async () => ({ step: "woke", sleepMS: 600_000 }),
  woke: async () => ({ done: true }),
});
${RUN_ROUTES}`;

let dev: DevProcess;
let greet: string[];
let checkout: string;
let doomed: string;

beforeAll(async () => {
  await initProject(dir, ORDERS_PROJECT);
  dev = await startDev([dir, "--port", "8895"], { readyTimeoutMs: 60_000 });
  greet = await startRuns(dev.url, "greet", 2, { name: "Ada" });
  checkout = (await startRuns(dev.url, "checkout"))[0]!;
  doomed = (await startRuns(dev.url, "doomed"))[0]!;
  await waitForRuns(dev.url, [...greet, checkout, doomed], 20_000);
});

afterAll(async () => {
  await dev?.stop("SIGTERM");
  removeWorkDir(work);
});

const workflowCli = (...args: string[]) => runCli(["workflow", ...args, "--dir", dir]);

/** The run ids a `platform workflow list` table shows, in order. */
function listedIds(stdout: string): string[] {
  return stdout
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => line.split(/\s+/)[0]!);
}

describe("platform workflow list", () => {
  it("prints every run, newest first, with its workflow and status", async () => {
    const result = await workflowCli("list", "--full");
    expect(result.code, result.stderr).toBe(0);
    const [header, ...rows] = result.stdout.trim().split("\n");
    expect(header).toMatch(/^run\s+workflow\s+status\s+created\s+last event$/);
    expect(rows).toHaveLength(4);
    // Started one after another (greet twice, checkout, doomed): listed in the reverse order, as printed.
    expect(listedIds(result.stdout)).toEqual([doomed, checkout, greet[1], greet[0]]);
    const row = (id: string) => rows.find((line) => line.startsWith(id))!;
    expect(row(checkout)).toMatch(/\scheckout\s+completed\s/);
    expect(row(doomed)).toMatch(/\sdoomed\s+failed\s/);
    for (const id of greet) expect(row(id)).toMatch(/\sgreet\s+completed\s/);
    expect(row(greet[0]!)).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/);
  });

  it("fits 100 columns with 8-character run ids, any unique prefix of which names the run", async () => {
    const result = await workflowCli("list");
    expect(result.code, result.stderr).toBe(0);
    for (const line of result.stdout.split("\n")) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(result.stdout).toContain(checkout.slice(0, 8) + " ");
    expect(result.stdout).toMatch(/--full shows them whole/);
    const got = await workflowCli("get", checkout.slice(0, 8));
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout.split("\n")[0]).toContain(`Run ${checkout} of "checkout"`);
  });

  it("filters by --status and --name", async () => {
    const failed = await workflowCli("list", "--full", "--status", "failed");
    expect(failed.code, failed.stderr).toBe(0);
    expect(listedIds(failed.stdout)).toEqual([doomed]);

    const greets = await workflowCli("list", "--full", "--name", "greet");
    expect(listedIds(greets.stdout)).toEqual([greet[1], greet[0]]);

    const both = await workflowCli("list", "--full", "--name", "checkout", "--status", "completed");
    expect(listedIds(both.stdout)).toEqual([checkout]);

    const none = await workflowCli("list", "--status", "running");
    expect(none.code).toBe(0);
    expect(none.stdout).toBe("No workflow runs match.\n");
  });

  it("pages with --limit and the --cursor it prints", async () => {
    const first = await workflowCli("list", "--full", "--limit", "3");
    expect(first.code, first.stderr).toBe(0);
    const cursor = /More: platform workflow list --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeTruthy();
    expect(listedIds(first.stdout.split("\nMore:")[0]!)).toEqual([doomed, checkout, greet[1]]);
    const rest = await workflowCli("list", "--full", "--limit", "3", "--cursor", cursor!);
    expect(listedIds(rest.stdout)).toEqual([greet[0]]);
  });

  it("rejects a bad filter with the platform's one-line reason", async () => {
    const result = await workflowCli("list", "--status", "sleeping");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /status must be one of queued, running, waiting, paused, completed, failed, cancelled/,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("platform workflow get", () => {
  it("prints a readable timeline: step, attempt, duration and the failure reason of a retried step", async () => {
    const result = await workflowCli("get", checkout);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split("\n");
    expect(lines[0]).toMatch(
      new RegExp(`^Run ${checkout.replace(".", "\\.")} of "checkout" \\(workflow id .+\\), completed in \\d+ ms$`),
    );
    expect(lines[1]).toMatch(/^started \d{4}-\d\d-\d\dT/);
    expect(lines[3]).toMatch(/^seq\s+at\s+event\s+step\s+attempt\s+duration\s+detail$/);
    // The timeline's rows run to the first blank line; the failed attempts follow it.
    const end = lines.indexOf("", 4);
    const events = lines.slice(4, end);
    expect(lines.slice(end).join("\n")).toMatch(/\nFailed attempts:\n[\s\S]*card declined, try again/);
    expect(events.map((line) => /^\d+\s+\+[\d.]+ m?s\s+(\S+)/.exec(line)?.[1])).toEqual(RETRIED_TWO_STEP_RUN);
    expect(events[1]).toMatch(/^2\s+\+\d+ ms\s+step_started\s+start\s+1\s*$/);
    expect(events[2]).toMatch(
      /^3\s+\+\d+ ms\s+step_failed\s+start\s+1\s+\d+ ms\s+card declined, try again \(will retry\)$/,
    );
    expect(events[3]).toMatch(/step_started\s+start\s+2\s+retry after waiting \d+ ms$/);
    expect(events[4]).toMatch(/step_completed\s+start\s+\d+ ms\s+next: ship, wrote charged$/);
    expect(events[6]).toMatch(/step_completed\s+ship\s+\d+ ms\s+done$/);
    expect(events[7]).toMatch(/workflow_completed\s+result "shipped"$/);
  });

  it("shows why a failed run failed", async () => {
    const result = await workflowCli("get", doomed);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.split("\n")[0]).toMatch(/, failed after \d+ ms: the address does not exist$/);
    expect(result.stdout).toMatch(/step_failed\s+start\s+1\s+\d+ ms\s+the address does not exist \(not retried\)/);
    expect(result.stdout).toMatch(/workflow_failed\s+the address does not exist/);
  });

  it("--json prints the run the project's workflow.get returns", async () => {
    const result = await workflowCli("get", greet[0]!, "--json");
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as RunView;
    expect(run).toMatchObject({ id: greet[0], name: "greet", status: "completed", result: { hello: "Ada" } });
    expect(run.events.map((event) => event.type)).toEqual([
      "workflow_created",
      "step_started",
      "step_completed",
      "workflow_completed",
    ]);
  });

  it.each([
    ["an unknown run id", "0".repeat(64) + ".aaaaaaaaaaaa"],
    ["a malformed run id", "no-such-run"],
  ])("fails with exit 1 and a one-line reason for %s", async (_what, runId) => {
    const result = await workflowCli("get", runId);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      `No workflow run has the id or workflow id "${runId}", and no run id starts with it.`,
    );
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stdout).toBe("");
  });
});

describe("platform workflow without a running platform dev", () => {
  it.each([["list"], ["get", "some-run"]])("`workflow %s` fails with exit 1 and a one-line reason", async (...args) => {
    const elsewhere = mkdtempSync(path.join(work, "not-running-"));
    const result = await runCli(["workflow", ...args, "--dir", elsewhere]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No `platform dev` is running for .*not-running-/);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("platform workflow start, send and cancel", () => {
  it("start --wait prints the run id, its events as they happen, and exits 0 when it completes", async () => {
    const result = await workflowCli("start", "greet", "--data", '{"name":"Bo"}', "--wait");
    expect(result.code, result.stderr).toBe(0);
    const [runId] = result.stdout.split("\n");
    expect(runId).toMatch(/\S{8,}/);
    expect(result.stdout).toMatch(/workflow_completed\s+result \{"hello":"Bo"\}/);
    expect(result.stdout).toMatch(new RegExp(`Run ${runId!.replace(".", "\\.")} of "greet" .*, completed in`));
  });

  it("a waiting run shows as waiting, takes the event sent to a prefix of its id and completes with it", async () => {
    const started = await workflowCli("start", "approve");
    expect(started.code, started.stderr).toBe(0);
    const runId = started.stdout.trim();
    const deadline = Date.now() + 20_000;
    let listed = "";
    while (!/\swaiting\s.*\sfor approval$/m.test(listed) && Date.now() < deadline)
      listed = (await workflowCli("list", "--full", "--name", "approve")).stdout;
    expect(listed).toMatch(/\swaiting\s.*\sfor approval$/m);
    const sent = await workflowCli("send", runId.slice(0, 10), "approval", "--data", '{"by":"ada"}');
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stdout).toBe(`Sent "approval" to run ${runId}.\n`);
    const [run] = await waitForRuns(dev.url, [runId], 20_000);
    expect(run).toMatchObject({ status: "completed", result: { name: "approval", payload: { by: "ada" } } });
    const timeline = await workflowCli("get", runId);
    expect(timeline.stdout).toMatch(/event_received\s+"approval" \{"by":"ada"\}/);
    expect(timeline.stdout).toMatch(/got "approval" after/);
  });

  it("cancel ends a sleeping run with its reason; cancelling it again is refused in one line", async () => {
    const runId = (await workflowCli("start", "nap")).stdout.trim();
    const deadline = Date.now() + 20_000;
    let listed = "";
    while (!/\ssleeping\s.*\suntil \d\d:\d\d:\d\dZ$/m.test(listed) && Date.now() < deadline)
      listed = (await workflowCli("list", "--full", "--name", "nap")).stdout;
    expect(listed).toMatch(/\ssleeping\s.*\suntil \d\d:\d\d:\d\dZ$/m);
    const cancelled = await workflowCli("cancel", runId, "--reason", "no longer needed");
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout).toBe(`Cancelled run ${runId} (no longer needed).\n`);
    const timeline = await workflowCli("get", runId);
    expect(timeline.stdout.split("\n")[0]).toMatch(/, cancelled after [\d.]+ m?s: no longer needed$/);
    expect(timeline.stdout).toMatch(/workflow_cancelled\s+reason: no longer needed/);
    const again = await workflowCli("cancel", runId);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split("\n")).toHaveLength(1);
    expect(again.stderr).toMatch(/already cancelled/);
    expect((await workflowCli("list", "--full", "--status", "cancelled")).stdout).toContain(runId);
  });

  it.each([
    ["start", "greet", "--data", "{name: Bo}"],
    ["send", "some-run", "approval", "--data", "'x'"],
  ])("`workflow %s` with --data that is not JSON exits 2 with one line", async (...args) => {
    const result = await workflowCli(...args);
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stderr).toMatch(/--data must be JSON/);
  });
});

describe("platform workflow against platform dev --node", () => {
  const nodeDir = path.join(work, "orders-node");
  let nodeDev: DevProcess;

  beforeAll(async () => {
    await initProject(nodeDir, ORDERS_PROJECT);
    nodeDev = await startDev([nodeDir, "--node", "--port", "8886"], { readyTimeoutMs: 60_000 });
  });
  afterAll(async () => {
    await nodeDev?.stop("SIGTERM");
  });
  const nodeCli = (...args: string[]) => runCli(["workflow", ...args, "--dir", nodeDir]);

  it("starts, sends, cancels and lists through the Node server's stand-in for the API", async () => {
    const greeted = await nodeCli("start", "greet", "--data", '{"name":"Cy"}', "--wait");
    expect(greeted.code, greeted.stderr).toBe(0);
    expect(greeted.stdout).toMatch(/workflow_completed\s+result \{"hello":"Cy"\}/);

    const approve = (await nodeCli("start", "approve")).stdout.trim();
    const sent = await nodeCli("send", approve, "approval", "--data", "1");
    expect(sent.code, sent.stderr).toBe(0);
    const nap = (await nodeCli("start", "nap")).stdout.trim();
    const cancelled = await nodeCli("cancel", nap.slice(0, 8));
    expect(cancelled.code, cancelled.stderr).toBe(0);

    const deadline = Date.now() + 20_000;
    let listed = "";
    while (!/\sapprove\s+completed/.test(listed) && Date.now() < deadline)
      listed = (await nodeCli("list", "--full")).stdout;
    expect(listed).toMatch(new RegExp(`${approve}\\s+approve\\s+completed`));
    expect(listed).toMatch(new RegExp(`${nap}\\s+nap\\s+cancelled`));
  });
});
