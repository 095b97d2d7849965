// docs/plugins.md's "Approval flows with workflows", its `approve` handler as written there, against a run
// waiting on the memory backend: the red-team's click by a member who is not an approver is answered
// privately and the run keeps waiting; the approver's click completes it. The chat server's plugin is a
// recorder of the calls the handler makes.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createMemoryWorkflowBackend, type MemoryWorkflowBackend } from "#src/engine/backends/memoryBackend.ts";
import {
  getWorkflowDefinition,
  installWorkflowBackend,
  resetWorkflowsForTests,
  workflow,
} from "#src/engine/api/workflowApi.ts";
import { runApprovers } from "#src/runtime/plugins/approvers.ts";
import { chatserver, type ChatComponentInteraction } from "#src/runtime/plugins/chatserver.ts";

const APPROVER = { id: "111111111111111111", name: "Ada" };
const MEMBER = { id: "222222222222222222", name: "Mallory" };

// The recipe, as docs/plugins.md writes it.
async function openApproval(runId: string) {
  const run = await workflow.get(runId).catch(() => null);
  if (run?.name !== "approval") return { refused: "This approval request is unknown." };
  if (run.status !== "running") return { refused: `This request was already decided (the run is ${run.status}).` };
  return { approvers: runApprovers(run) };
}

async function approve(click: ChatComponentInteraction) {
  const runId = click.customId.slice("approve:".length);
  const { refused, approvers } = await openApproval(runId);
  if (refused) return chatserver.reply(click, { content: refused, ephemeral: true });
  if (await chatserver.refuseNonApprover(click, approvers!)) return;
  await workflow.send(runId, "approval", { approved: true, by: click.user?.name });
  await chatserver.update(click, {
    content: `${click.message.content} Approved by ${click.user?.name}.`,
    components: [],
  });
}

let backend: MemoryWorkflowBackend;
let calls: { path: string; body: Record<string, unknown> }[];

beforeEach(() => {
  resetWorkflowsForTests();
  workflow("approval", {
    start: async () => ({ step: "decided", waitFor: "approval", timeoutMS: 86_400_000 }),
    decided: async (ctx) => ({ done: true, result: ctx.event?.payload ?? { approved: false, by: null } }),
  });
  backend = createMemoryWorkflowBackend({ definitions: getWorkflowDefinition, log: () => {}, logError: () => {} });
  installWorkflowBackend(backend);
  calls = [];
});

afterEach(() => backend.close());

/** Starts an approval run and returns it once it waits for its `approval` event. */
async function waitingApproval(data: Record<string, unknown>) {
  const run = await workflow.start("approval", data);
  await vi.waitFor(async () => expect((await workflow.get(run.id))?.waitingFor).toMatchObject({ name: "approval" }));
  return run;
}

function click(runId: string, user: { id: string; name: string }): ChatComponentInteraction {
  const plugin = {
    fetch: async (url: string, init: RequestInit) => {
      calls.push({ path: new URL(url).pathname, body: JSON.parse(String(init.body)) });
      return Response.json({ messageId: "m1", channelId: "c1" });
    },
  };
  return {
    customId: `approve:${runId}`,
    componentType: "button",
    values: [],
    user,
    replyToken: "reply-token",
    message: { id: "m1", channelId: "c1", content: "Deploy web?", components: [] },
    env: { PLATFORM_WORKER_SECRET: "s".repeat(32), PLATFORM_PROJECT_ID: "1", CHATSERVER_PLUGIN: plugin },
  } as unknown as ChatComponentInteraction;
}

it("refuses a member who is not an approver privately and keeps the run waiting; the approver's click decides it", async () => {
  const run = await waitingApproval({ what: "web", approvers: [APPROVER.id] });

  await approve(click(run.id, MEMBER));
  expect(calls).toEqual([
    {
      path: "/proxy/reply",
      body: expect.objectContaining({ content: "You are not one of the approvers of this request.", ephemeral: true }),
    },
  ]);
  expect(await workflow.get(run.id)).toMatchObject({ status: "running", waitingFor: { name: "approval" } });

  calls.length = 0;
  await approve(click(run.id, APPROVER));
  expect(await run.result()).toEqual({ approved: true, by: "Ada" });
  expect(calls.map((call) => call.path)).toEqual(["/proxy/update"]);
});

it("refuses everyone when the run names no approvers", async () => {
  const run = await waitingApproval({ what: "web" });
  await approve(click(run.id, APPROVER));
  expect(calls.map((call) => [call.path, call.body.content])).toEqual([
    ["/proxy/reply", "You are not one of the approvers of this request."],
  ]);
  expect(await workflow.get(run.id)).toMatchObject({ status: "running", waitingFor: { name: "approval" } });
});
