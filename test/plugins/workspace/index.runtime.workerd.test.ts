// The workspace-chat plugin with a real project worker (the entry wrapper and the runtime):
// workspace.onEvent and proxy calls end to end.
import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createPlatformWorker } from "#src/runtime/entry/createPlatformWorker.ts";
import {
  resetWorkspaceHandlers,
  workspace,
  type WorkspaceEvent,
  type WorkspaceViewSubmission,
} from "#src/runtime/plugins/workspace.ts";
import { reasonModal } from "#test/support/chat/reasonModal.ts";
import { type Setup, setup, installedProject, SLACK_ORIGIN } from "./index.fixture.ts";
import { fakeControl } from "./index.fixture.ts";

/** ada's project "ada-app" as a real project worker (the entry wrapper and the runtime) with the workspace installed. */
async function adaAppOnTheRuntime(): Promise<{ t: Setup; projectEnv: Record<string, unknown> }> {
  const worker = createPlatformWorker({ fetch: () => new Response("project home") });
  const projectEnv: Record<string, unknown> = {};
  const t: Setup = setup({
    project: (request) =>
      worker.fetch!(request as never, projectEnv as never, createExecutionContext()) as Promise<Response>,
  });
  const { row } = await installedProject(t, "ada@example.com", "ada-app");
  Object.assign(projectEnv, {
    PLATFORM_WORKER_SECRET: row.worker_secret,
    PLATFORM_PROJECT_ID: String(row.id),
    PLATFORM_PROJECT_SLUG: row.slug,
    WORKSPACE_PLUGIN: {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
    },
  });
  return { t, projectEnv };
}

describe("runtime: workspace.onEvent and proxy calls from a real project worker", () => {
  it("a mention reaches the handler once; its thread reply reaches the fake Slack in the right thread", async () => {
    resetWorkspaceHandlers();
    const seen: WorkspaceEvent[] = [];
    workspace.onEvent("mention", async (event, context) => {
      seen.push(event);
      expect(context.project.slug).toBe("ada-app");
      await workspace.threadReply(event.channel!, event.ts!, `Hi <@${event.user}>!`, { resource: context.resource });
    });
    const { t } = await adaAppOnTheRuntime();
    const { json } = await t.trigger({ kind: "mention", teamId: "T0TEST", text: "hello" });
    expect(json.response.status).toBe(200);
    await t.settle();
    await t.trigger({ retry: 1 });
    await t.settle();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      type: "mention",
      text: "<@U0BOT0TEST> hello",
      user: "U0ALICE",
      channel: "C0GENERAL",
    });
    const posts = t.slack.recorded.filter((c) => c.method === "chat.postMessage");
    expect(posts).toHaveLength(1);
    expect(posts[0]!.ok).toBe(true);
    expect(posts[0]!.params).toMatchObject({
      channel: "C0GENERAL",
      thread_ts: json.delivered.event.ts,
      text: "Hi <@U0ALICE>!",
    });
    resetWorkspaceHandlers();
  });

  it("onAction gets the click; openView opens a modal; onViewSubmission gets its fields; editMessage with blocks and sendEphemeral reach the workspace", async () => {
    resetWorkspaceHandlers();
    const submissions: WorkspaceViewSubmission[] = [];
    workspace.onAction("reject", async (action) => {
      await workspace.openView(
        action,
        reasonModal({
          callbackId: `why:${action.actionId.split(":")[1]}`,
          privateMetadata: `${action.channel} ${action.messageTs}`,
          title: "Why reject?",
          submit: "Reject",
        }),
      );
    });
    workspace.onViewSubmission("why", async (submission) => {
      submissions.push(submission);
      const [channel, ts] = submission.privateMetadata.split(" ");
      await workspace.editMessage(channel!, ts!, `Rejected: ${submission.fields.reason}`, {
        blocks: [{ type: "section", text: { type: "mrkdwn", text: `Rejected by <@${submission.user.id}>` } }],
      });
      await workspace.sendEphemeral(channel!, submission.user.id, "Thanks, noted.");
    });
    const { t, projectEnv } = await adaAppOnTheRuntime();
    const posted = await workspace.sendMessage("C0GENERAL", "Deploy?", {
      env: projectEnv,
      blocks: [
        {
          type: "actions",
          elements: [{ type: "button", action_id: "reject:run-3", text: { type: "plain_text", text: "Reject" } }],
        },
      ],
    });
    await t.trigger({ kind: "action", actionId: "reject:run-3" });
    await t.settle();
    expect(t.slack.recorded.find((c) => c.method === "views.open")).toMatchObject({ ok: true });
    await t.trigger({ kind: "view", callbackId: "why:run-3", fields: { reason: "Friday" } });
    await t.settle();
    expect(submissions).toHaveLength(1);
    expect(submissions[0]).toMatchObject({
      callbackId: "why:run-3",
      fields: { reason: "Friday" },
      user: { id: "U0ALICE" },
    });
    const chat = (await (
      await t.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/chat?resourceId=T0TEST`))
    ).json()) as any;
    expect(chat.channels[0].messages.map((m: any) => [m.id === posted.ts, m.text, m.ephemeral, m.rows])).toEqual([
      [true, "Rejected: Friday", false, [{ kind: "text", text: "Rejected by <@U0ALICE>" }]],
      [false, "Thanks, noted.", true, []],
    ]);
    resetWorkspaceHandlers();
  });

  it("runtime functions refuse bad input before any call, and surface the plugin's errors as PlatformErrors", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const projectEnv = {
      PLATFORM_WORKER_SECRET: row.worker_secret,
      PLATFORM_PROJECT_ID: String(row.id),
      WORKSPACE_PLUGIN: {
        fetch: (input: RequestInfo | URL, init?: RequestInit) => t.callPlugin(new Request(input, init)),
      },
    };
    await expect(workspace.sendMessage("general", "x", { env: projectEnv })).rejects.toMatchObject({
      code: "invalid_input",
    });
    await expect(workspace.addReaction("C0GENERAL", "nope", "tada", { env: projectEnv })).rejects.toMatchObject({
      code: "invalid_input",
    });
    expect(() => workspace.onEvent("typing" as never, () => {})).toThrow(/unknown event/);
    const posted = await workspace.sendMessage("C0GENERAL", "hello", { env: projectEnv });
    expect(posted).toMatchObject({ channel: "C0GENERAL" });
    await expect(workspace.editMessage("C0GENERAL", posted.ts, "edited", { env: projectEnv })).resolves.toMatchObject({
      ts: posted.ts,
    });
    await expect(workspace.addReaction("C0GENERAL", posted.ts, "tada", { env: projectEnv })).resolves.toBeUndefined();
    await expect(workspace.sendMessage("C0MISSING", "x", { env: projectEnv })).rejects.toMatchObject({
      code: "upstream_error",
    });
    await fakeControl(t.slack, "ratelimit", { retryAfter: 9 });
    await expect(workspace.threadReply("C0GENERAL", posted.ts, "x", { env: projectEnv })).rejects.toMatchObject({
      code: "rate_limited",
      details: { retryAfterSeconds: 9 },
    });
  });
});
