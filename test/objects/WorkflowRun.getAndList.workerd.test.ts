/**
 * workflow.get and workflow.list on the Durable Object backend: a run found from its id alone
 * (any malformed or foreign id is null), and the per-project index listed newest first.
 */
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { workflow } from "#src/engine/api/workflowApi.ts";
import { waitForIndexed } from "#test/support/workerd/index.ts";
import { ONE_STEP_LOG, rejection } from "#test/support/workflow/index.ts";
import { gates, register, shape, useActorTestHost } from "./WorkflowRun.fixture.ts";

useActorTestHost();

describe("WorkflowRunActor: get and list", () => {
  beforeEach(() => {
    register.gated("query.gated");
    register.fatal("query.fatal");
    register.other("query.other");
  });

  it("workflow.get finds a run from its id alone; a malformed or foreign run id is null", async () => {
    const run = await workflow.start("query.other", null, { id: "get-1" });
    await run.result();
    const view = await workflow.get(run.id);
    expect(view).toMatchObject({ id: run.id, workflowId: "get-1", name: "query.other" });
    expect(view).toMatchObject({ status: "completed", result: "other" });
    expect(shape(view?.events ?? [])).toEqual(ONE_STEP_LOG);

    const [hex, suffix] = run.id.split(".") as [string, string];
    for (const id of [
      "nope",
      `${hex}`,
      `${hex}.`,
      `${hex}.${suffix}x`,
      `${hex}.${suffix.toUpperCase()}`,
      `${hex.toUpperCase()}.${suffix}`,
      `${hex.slice(1)}.${suffix}`,
      `${hex}.${suffix}.${suffix}`,
      // 64 hex digits, but no id of this namespace (made up, or minted by another namespace).
      `${"0".repeat(64)}.${suffix}`,
      `${env.WORKFLOW_RUN_INDEX.idFromName("index")}.${suffix}`,
      // An id of this namespace, with a run that does not exist.
      `${hex}.zzzzzzzzzzzz`,
      `${env.WORKFLOW_RUNS.newUniqueId()}.${suffix}`,
    ]) {
      expect(await workflow.get(id), id).toBeNull();
    }
    expect((await rejection(workflow.get(""))).code).toBe("invalid_input");
  });

  it("workflow.list reads the index: newest first, name and status filters, limit and cursor", async () => {
    const done: string[] = [];
    for (const n of [1, 2, 3]) {
      const run = await workflow.start("query.other", null, { id: `list-done-${n}` });
      await run.result();
      done.push(run.id);
    }
    const failed = await workflow.start("query.fatal", null, { id: "list-failed" });
    await expect(failed.result()).rejects.toMatchObject({ code: "workflow_failed" });
    gates.gateFor("list-open-1");
    gates.gateFor("list-open-2");
    const open1 = await workflow.start("query.gated", null, { id: "list-open-1" });
    const open2 = await workflow.start("query.gated", null, { id: "list-open-2" });
    await waitForIndexed(failed.id, "failed");
    for (const id of done) await waitForIndexed(id, "completed");

    const ids = (page: { runs: { id: string }[] }) => page.runs.map((r) => r.id);
    expect(ids(await workflow.list())).toEqual([open2.id, open1.id, failed.id, done[2], done[1], done[0]]);
    expect(ids(await workflow.list({ name: "query.other" }))).toEqual([done[2], done[1], done[0]]);
    expect(ids(await workflow.list({ status: "running" }))).toEqual([open2.id, open1.id]);
    expect(ids(await workflow.list({ status: "failed" }))).toEqual([failed.id]);
    expect(ids(await workflow.list({ name: "query.gated", status: "completed" }))).toEqual([]);
    expect((await workflow.list({ name: "query.other", limit: 1 })).runs[0]).toEqual({
      id: done[2],
      workflowId: "list-done-3",
      name: "query.other",
      status: "completed",
      // Its only step: it ended in start.
      step: "start",
      createdAt: expect.any(Number),
      updatedAt: expect.any(Number),
      expiresAt: expect.any(Number),
    });

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await workflow.list({ limit: 4, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(page));
      cursor = page.cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(2);
    expect(seen).toEqual([open2.id, open1.id, failed.id, done[2], done[1], done[0]]);
    const paged = await workflow.list({ name: "query.other", limit: 2 });
    expect(ids(paged)).toEqual([done[2], done[1]]);
    expect(ids(await workflow.list({ name: "query.other", limit: 2, cursor: paged.cursor }))).toEqual([done[0]]);

    for (const filter of [
      { limit: 0 },
      { limit: 101 },
      { limit: 1.5 },
      { status: "done" },
      { cursor: "not-a-cursor" },
    ]) {
      expect((await rejection(workflow.list(filter as never))).code).toBe("invalid_input");
    }
  });
});
