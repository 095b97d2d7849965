import { describe, expect, it } from "vitest";
import { signWorkspaceRequest } from "#src/plugins/workspace/workspaceSignature.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { expectError, userWithProject } from "#test/support/workerd/index.ts";
import { reasonModal } from "#test/support/chat/reasonModal.ts";
import {
  PLUGIN_ORIGIN,
  SLACK_ORIGIN,
  SIGNING_SECRET,
  type Setup,
  pluginDeliveries,
  setup,
  installedProject,
  proxy,
} from "./index.fixture.ts";

describe("interactivity: block actions and views", () => {
  const approvalBlocks = (runId: string) => [
    { type: "section", text: { type: "mrkdwn", text: "Deploy?" } },
    {
      type: "actions",
      block_id: "decide",
      elements: [
        { type: "button", action_id: `approve:${runId}`, text: { type: "plain_text", text: "Approve" }, value: runId },
        { type: "button", action_id: `reject:${runId}`, text: { type: "plain_text", text: "Reject" }, style: "danger" },
        {
          type: "static_select",
          action_id: "env",
          placeholder: { type: "plain_text", text: "Where?" },
          options: [
            { text: { type: "plain_text", text: "Staging" }, value: "staging" },
            { text: { type: "plain_text", text: "Production" }, value: "prod" },
          ],
        },
      ],
    },
  ];
  const view = (runId: string) =>
    reasonModal({
      callbackId: `why:${runId}`,
      privateMetadata: runId,
      title: "Why reject?",
      submit: "Reject",
      blockId: "reason_block",
      multiline: true,
    });

  async function posted(t: Setup, row: ProjectRow, runId = "run-1"): Promise<string> {
    const response = await proxy(t, row, "send-message", {
      channel: "C0GENERAL",
      text: "Deploy?",
      blocks: approvalBlocks(runId),
    });
    expect(response.status, await response.clone().text()).toBe(200);
    return ((await response.json()) as { ts: string }).ts;
  }

  const deliveryOf = (t: Setup, i = 0) => JSON.parse(pluginDeliveries(t)[i]!.body);

  it("a click is a signed form body (payload=…), acknowledged with an empty 200 and delivered once as an action", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const ts = await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    expect(out.status).toBe(200);
    expect(out.json.response).toMatchObject({ status: 200, body: "" });
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(1);
    expect(pluginDeliveries(t)[0]!.scriptName).toBe(row.script_name);
    const delivery = deliveryOf(t);
    expect(delivery).toMatchObject({
      kind: "action",
      name: "approve:run-1",
      user: { id: "U0ALICE", name: "alice" },
      event: {
        type: "action",
        teamId: "T0TEST",
        actionId: "approve:run-1",
        blockId: "decide",
        elementType: "button",
        value: "run-1",
        values: ["run-1"],
        channel: "C0GENERAL",
        messageTs: ts,
        message: { ts, text: "Deploy?" },
      },
    });
    // The provider's trigger_id stays with the plugin: the project gets it sealed.
    expect(pluginDeliveries(t)[0]!.body).not.toContain(out.json.delivered.trigger_id);
    // The same payload delivered again (a retry) is acknowledged, not delivered again.
    const again = new URLSearchParams({ payload: JSON.stringify(out.json.delivered) }).toString();
    const retried = await t.callPlugin(await signedForm(again));
    expect(retried.status).toBe(200);
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(1);
  });

  it("a select's chosen option reaches the handler; a value it does not offer is refused by the fake", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    expect((await t.trigger({ kind: "action", actionId: "env", value: "dev" })).json.error).toMatch(
      /Choose one of this select's options/,
    );
    await t.trigger({ kind: "action", actionId: "env", value: "prod" });
    await t.settle();
    expect(deliveryOf(t).event).toMatchObject({ elementType: "static_select", value: "prod", values: ["prod"] });
  });

  it.each([
    ["a forged signature", { secret: "not-the-secret" }, 401],
    ["a stale one (6 minutes)", { ts: Math.floor(Date.now() / 1000) - 360 }, 401],
  ])("a form body with %s is refused %i, nothing delivered", async (_name, options, status) => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    await t.settle();
    const delivered = pluginDeliveries(t).length;
    const body = new URLSearchParams({ payload: JSON.stringify({ ...out.json.delivered, trigger_id: "1.2.new" }) });
    const response = await t.callPlugin(await signedForm(body.toString(), options));
    expect(response.status).toBe(status);
    await t.settle();
    expect(pluginDeliveries(t)).toHaveLength(delivered);
  });

  it("a click from a workspace no project claimed is refused 404", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row);
    const out = await t.trigger({ kind: "action", actionId: "approve:run-1" });
    await t.settle();
    const other = {
      ...out.json.delivered,
      team: { id: "T0OTHER" },
      user: { id: "U1", team_id: "T0OTHER" },
      trigger_id: "9.9.x",
    };
    const response = await t.callPlugin(
      await signedForm(new URLSearchParams({ payload: JSON.stringify(other) }).toString()),
    );
    expect(response.status).toBe(404);
    expect(((await response.json()) as any).error.message).toMatch(/T0OTHER is not connected to any project/);
  });

  it("openView with the click's trigger token opens a view; its submission delivers fields by action_id and private_metadata", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    await posted(t, row, "run-7");
    await t.trigger({ kind: "action", actionId: "reject:run-7" });
    await t.settle();
    const { triggerToken } = deliveryOf(t).event;
    const opened = await proxy(t, row, "open-view", { triggerToken, view: view("run-7") });
    expect(opened.status, await opened.clone().text()).toBe(200);
    expect(await opened.json()).toEqual({ viewId: expect.stringMatching(/^V0/) });
    // The trigger opens one view: a second use is Slack's exchanged_trigger_id, said plainly.
    const twice = await expectError(
      await proxy(t, row, "open-view", { triggerToken, view: view("run-7") }),
      400,
      "invalid_input",
    );
    expect(twice.error.message).toMatch(/Slack refused to open the view \(exchanged_trigger_id\)/);
    const submitted = await t.trigger({ kind: "view", callbackId: "why:run-7", fields: { reason: "Friday" } });
    expect(submitted.json.response).toMatchObject({ status: 200, body: "" });
    await t.settle();
    expect(deliveryOf(t, 1)).toMatchObject({
      kind: "view",
      name: "why:run-7",
      event: {
        type: "view",
        callbackId: "why:run-7",
        privateMetadata: "run-7",
        fields: { reason: "Friday" },
        values: { reason_block: { reason: { type: "plain_text_input", value: "Friday" } } },
        user: { id: "U0ALICE" },
      },
    });
    // Submitted (an empty 200 closes it): nothing left to submit.
    expect((await t.trigger({ kind: "view", callbackId: "why:run-7", fields: { reason: "x" } })).json.error).toMatch(
      /No view with callback_id "why:run-7" is open/,
    );
  });

  it("a trigger token older than 3 s, or another project's, is refused before any call", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const { row: bob } = await userWithProject("bob@example.com", "bob-app", { private: true });
    const { sealTriggerToken } = await import("#src/plugins/workspace/triggerToken.ts");
    const stale = await sealTriggerToken(t.env, row.id, { triggerId: "1.2.3", teamId: "T0TEST" }, Date.now() - 4_000);
    const bobs = await sealTriggerToken(t.env, bob.id, { triggerId: "1.2.3", teamId: "T0TEST" });
    const before = t.slackRequests.length;
    const old = await expectError(
      await proxy(t, row, "open-view", { triggerToken: stale, view: view("r") }),
      400,
      "invalid_input",
    );
    expect(old.error.message).toBe(
      "The click is more than 3 seconds old: the workspace opens a view only within 3 seconds of it. Call workspace.openView before any slow work.",
    );
    const foreign = await expectError(
      await proxy(t, row, "open-view", { triggerToken: bobs, view: view("r") }),
      400,
      "invalid_input",
    );
    expect(foreign.error.message).toBe("triggerToken is not valid for this project.");
    expect(t.slackRequests).toHaveLength(before);
  });

  it("sendEphemeral posts a message only that user sees", async () => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const response = await proxy(t, row, "send-ephemeral", {
      channel: "C0GENERAL",
      user: "U0ALICE",
      text: "Already approved.",
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await response.json()).toEqual({ channel: "C0GENERAL", messageTs: expect.stringMatching(/^\d+\.\d+$/) });
    const chat = (await (
      await t.slack.fetch(new Request(`${SLACK_ORIGIN}/__fake/chat?resourceId=T0TEST`))
    ).json()) as any;
    expect(chat.channels[0].messages.at(-1)).toMatchObject({ text: "Already approved.", ephemeral: true });
  });

  const tooMany = (n: number) => Array.from({ length: n }, () => ({ type: "divider" }));
  const button = (id: string, text = "B") => ({ type: "button", action_id: id, text: { type: "plain_text", text } });
  it.each([
    ["send-message", { blocks: tooMany(51) }, "blocks must be an array of 0–50 blocks."],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: Array.from({ length: 26 }, (_, i) => button(`b${i}`)) }] },
      "blocks[0].elements must be an array of 1–25 elements.",
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("a", "x".repeat(76))] }] },
      "blocks[0].elements[0].text.text must be 1–75 characters.",
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("a"), button("a")] }] },
      'blocks[0].elements[1].action_id repeats "a": each must be unique.',
    ],
    [
      "send-message",
      { blocks: [{ type: "actions", elements: [button("x".repeat(256))] }] },
      "blocks[0].elements[0].action_id must be 1–255 characters.",
    ],
    [
      "open-view",
      { view: { ...view("r"), title: { type: "plain_text", text: "x".repeat(25) } } },
      "view.title.text must be 1–24 characters.",
    ],
    [
      "open-view",
      { view: { ...view("r"), submit: undefined } },
      "view.submit is required when the view has input blocks.",
    ],
    [
      "send-message",
      { blocks: [{ type: "context", elements: tooMany(11).map(() => ({ type: "mrkdwn", text: "x" })) }] },
      "blocks[0].elements must be an array of 1–10 elements.",
    ],
    ["send-message", { blocks: [{ type: "image", alt_text: "chart" }] }, "blocks[0] needs image_url or slack_file."],
    [
      "send-message",
      { blocks: [{ type: "image", image_url: "https://example.com/a.png" }] },
      "blocks[0].alt_text must be 1–2000 characters.",
    ],
    [
      "send-message",
      { blocks: [{ type: "image", image_url: `https://example.com/${"x".repeat(3000)}`, alt_text: "a" }] },
      "blocks[0].image_url must be 1–3000 characters.",
    ],
    [
      "open-view",
      { view: { ...view("r"), private_metadata: "x".repeat(3001) } },
      "view.private_metadata must be a string of at most 3000 characters.",
    ],
  ])("%s with %o is refused before any call", async (route, extra, message) => {
    const t = setup();
    const { row } = await installedProject(t, "ada@example.com", "ada-app");
    const before = t.slackRequests.length;
    const body =
      route === "open-view" ? { triggerToken: "x", ...extra } : { channel: "C0GENERAL", text: "x", ...extra };
    const error = await expectError(await proxy(t, row, route, body), 400, "invalid_input");
    expect(error.error.message).toBe(message);
    expect(t.slackRequests).toHaveLength(before);
  });
});

async function signedForm(body: string, options: { secret?: string; ts?: number } = {}): Promise<Request> {
  const ts = String(options.ts ?? Math.floor(Date.now() / 1000));
  const signature = await signWorkspaceRequest(options.secret ?? SIGNING_SECRET, ts, body);
  return new Request(`${PLUGIN_ORIGIN}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "X-Slack-Signature": signature,
      "X-Slack-Request-Timestamp": ts,
    },
    body,
  });
}
