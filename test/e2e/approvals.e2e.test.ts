// Approval flows through workflows, under `platform dev`, through each plugin's real webhook path with signed
// interactions: a slash command replies with Approve / Reject buttons whose customId carries a waiting run's
// id; a click sends "approval" to the run and updates the message; Reject opens a modal whose reason reaches
// the run; a select's value reaches its handler; a click on a finished run, or on a run id that is not one of
// the project's runs, gets an ephemeral answer. The same on the workspace chat with block actions and a view,
// on a workspace whose token expires every 2 seconds (refreshed before each call), and then a refresh the
// fake refuses, shown by `platform plugin status`. Then the console's chat window: a click in Chromium and the
// updated message.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { artifactPath, launchChromium, removeWorkDir } from "../support/e2e/index.ts";
import { devSession, PLATFORM_BIN, REPO, runCli, signedInConsoleUrl, startDev } from "../support/e2e/index.ts";
import type { DevProcess } from "../support/e2e/index.ts";

// Port of this file: 8920.

const work = mkdtempSync(path.join(tmpdir(), "platform-approvals-"));
const dir = path.join(work, "approvals");
let dev: DevProcess;
let browser: Browser;

/** The project: the approval example of docs/plugins.md, on both chats. */
const PROJECT = `import { chatserver, runApprovers, workflow, workspace } from "platform";

// Who may decide a deploy: the chat server's test user and the workspace's alice, by user id.
const DEPLOY_APPROVERS = ["555555555555555555", "U0ALICE"];

// A run asks, waits for "approval", and finishes with the answer (who, and whether).
workflow("approval", {
  start: async (ctx) => {
    if (ctx.data.on === "workspace") {
      const sent = await workspace.sendMessage(ctx.data.channel, "Deploy " + ctx.data.what + "?", {
        blocks: [
          { type: "section", text: { type: "mrkdwn", text: "Deploy *" + ctx.data.what + "*?" } },
          {
            type: "actions",
            elements: [
              { type: "button", action_id: "approve:" + ctx.runId, style: "primary", text: { type: "plain_text", text: "Approve" } },
              { type: "button", action_id: "reject:" + ctx.runId, style: "danger", text: { type: "plain_text", text: "Reject" } },
            ],
          },
        ],
      });
      ctx.write("message", sent.ts);
    }
    return { step: "decided", waitFor: "approval" };
  },
  decided: async (ctx) => ({ done: true, result: ctx.event?.payload ?? null }),
});

// A customId is text anyone can write: the run it names must be one of this project's approval runs, still open.
async function openApproval(runId: string): Promise<{ error?: string; approvers: string[] }> {
  const run = await workflow.get(runId).catch(() => null);
  if (!run || run.name !== "approval") return { error: "This approval request is unknown.", approvers: [] };
  if (run.status !== "running")
    return { error: "This request was already decided (the run is " + run.status + ").", approvers: [] };
  return { approvers: runApprovers(run) };
}

chatserver.onCommand("deploy", async (command) => {
  const what = String(command.args.text ?? "the app");
  const run = await workflow.start("approval", { on: "chatserver", what, approvers: DEPLOY_APPROVERS });
  await chatserver.reply(command, {
    content: "Deploy " + what + "?",
    components: [
      { type: "button", customId: "approve:" + run.id, label: "Approve", style: "success" },
      { type: "button", customId: "reject:" + run.id, label: "Reject", style: "danger" },
    ],
  });
}, { description: "Ask for approval before a deploy" });

chatserver.onComponent("approve", async (click) => {
  const runId = click.customId.slice("approve:".length);
  const found = await openApproval(runId);
  if (found.error) return chatserver.reply(click, { content: found.error, ephemeral: true });
  if (await chatserver.refuseNonApprover(click, found.approvers)) return;
  const by = click.user?.name ?? "someone";
  await workflow.send(runId, "approval", { approved: true, by });
  await chatserver.update(click, { content: click.message.content + " Approved by " + by + ".", components: [] });
});

chatserver.onComponent("reject", async (click) => {
  const runId = click.customId.slice("reject:".length);
  const found = await openApproval(runId);
  if (found.error) return chatserver.reply(click, { content: found.error, ephemeral: true });
  if (await chatserver.refuseNonApprover(click, found.approvers)) return;
  await chatserver.showModal(click, {
    customId: "reason:" + runId,
    title: "Why reject?",
    fields: [{ customId: "reason", label: "Reason", style: "paragraph" }],
  });
});

chatserver.onModalSubmit("reason", async (submit) => {
  const runId = submit.customId.slice("reason:".length);
  const found = await openApproval(runId);
  if (found.error) return chatserver.reply(submit, { content: found.error, ephemeral: true });
  if (await chatserver.refuseNonApprover(submit, found.approvers)) return;
  const by = submit.user?.name ?? "someone";
  await workflow.send(runId, "approval", { approved: false, by, reason: submit.fields.reason });
  await chatserver.update(submit, { content: "Rejected by " + by + ": " + submit.fields.reason, components: [] });
});

chatserver.onCommand("env", (command) =>
  chatserver.reply(command, {
    content: "Which environment?",
    components: [{ type: "select", customId: "env", placeholder: "Pick one", options: [
      { label: "Staging", value: "staging" },
      { label: "Production", value: "production" },
    ] }],
  }), { description: "Pick an environment" });

chatserver.onComponent("env", (choice) =>
  chatserver.update(choice, { content: "Environment: " + choice.values.join(", "), components: [] }));

workspace.onEvent("mention", async (event) => {
  const what = (event.text ?? "").replace(/<@[^>]+>/g, "").replace(/deploy/, "").trim() || "the app";
  await workflow.start("approval", { on: "workspace", channel: event.channel, what, approvers: DEPLOY_APPROVERS });
});

workspace.onEvent("message", async (event) => {
  await workspace.threadReply(event.channel, event.ts, "echo: " + event.text);
});

workspace.onAction("approve", async (action) => {
  const runId = action.actionId.slice("approve:".length);
  const found = await openApproval(runId);
  if (found.error) return workspace.sendEphemeral(action.channel, action.user.id, found.error);
  if (await workspace.refuseNonApprover(action, found.approvers)) return;
  const by = action.user.name ?? action.user.id;
  await workflow.send(runId, "approval", { approved: true, by });
  await workspace.editMessage(action.channel, action.messageTs, "Approved by " + by, {
    blocks: [{ type: "section", text: { type: "mrkdwn", text: "Approved by " + by + "." } }],
  });
});

workspace.onAction("reject", async (action) => {
  const runId = action.actionId.slice("reject:".length);
  const found = await openApproval(runId);
  if (found.error) return workspace.sendEphemeral(action.channel, action.user.id, found.error);
  if (await workspace.refuseNonApprover(action, found.approvers)) return;
  await workspace.openView(action, {
    type: "modal",
    callback_id: "reason:" + runId,
    private_metadata: action.channel + " " + action.messageTs,
    title: { type: "plain_text", text: "Why reject?" },
    submit: { type: "plain_text", text: "Reject" },
    blocks: [{ type: "input", block_id: "reason", label: { type: "plain_text", text: "Reason" },
      element: { type: "plain_text_input", action_id: "reason", multiline: true } }],
  });
});

workspace.onViewSubmission("reason", async (submission) => {
  const runId = submission.callbackId.slice("reason:".length);
  const [channel, ts] = submission.privateMetadata.split(" ");
  const by = submission.user.name ?? submission.user.id;
  await workflow.send(runId, "approval", { approved: false, by, reason: submission.fields.reason });
  await workspace.editMessage(channel, ts, "Rejected by " + by, {
    blocks: [{ type: "section", text: { type: "mrkdwn", text: "Rejected by " + by + ": " + submission.fields.reason } }],
  });
});

export default { fetch: () => new Response("approvals") };
`;

beforeAll(async () => {
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "approvals", private: true, type: "module" }));
  writeFileSync(path.join(dir, "src/index.ts"), PROJECT);
  // Not --private: under platform dev a local project is a private deployment for the proxy rate all the
  // same, so the many plugin actions of this file are never refused (issue 29: no 3-per-minute limit locally).
  dev = await startDev([dir, "--port", "8920"]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  removeWorkDir(work);
});

function fakeUrl(id: "chatserver" | "workspace"): string {
  const match = dev.output().match(new RegExp(`${id} plugin at \\S+ \\(fake provider at (http://\\S+)\\)`));
  if (!match) throw new Error(`No fake provider URL for ${id} in:\n${dev.output()}`);
  return match[1]!;
}

async function api(method: string, route: string, body?: unknown): Promise<any> {
  const session = devSession(dir);
  const response = await fetch(`${session.apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${session.cliToken}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return response.json();
}

const slug = () => devSession(dir).slug;
const run = async (runId: string) =>
  (await api("GET", `/projects/${slug()}/workflows/${encodeURIComponent(runId)}`)) as any;
const completed = async (runId: string) => {
  await expect.poll(async () => (await run(runId)).status, { timeout: 15_000, interval: 250 }).toBe("completed");
  return (await run(runId)).result;
};

async function fake(id: "chatserver" | "workspace", route: string, body?: unknown): Promise<any> {
  const response = await fetch(fakeUrl(id) + route, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return response.json();
}

const trigger = async (...args: string[]) => {
  const result = await runCli(["plugin", "trigger", ...args, "--dir", dir]);
  console.log(`$ platform plugin trigger ${args.join(" ")}\n${result.stdout}${result.stderr}`);
  return result;
};

/** `platform plugin install <plugin>` with the fake's consent page approved in Chromium. */
async function install(plugin: "chatserver" | "workspace", button: "Authorize" | "Allow") {
  const child = spawn(process.execPath, [PLATFORM_BIN, "plugin", "install", plugin, "--no-open", "--dir", dir], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1" },
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await expect.poll(() => /(http:\/\/\S+\/install\?code=[0-9a-f]{64})/.test(output), { timeout: 20_000 }).toBe(true);
  const page = await browser.newPage();
  try {
    await page.goto(/(http:\/\/\S+\/install\?code=[0-9a-f]{64})/.exec(output)![1]!);
    await page.getByRole("button", { name: button }).click();
    await page.waitForLoadState();
  } finally {
    await page.close();
  }
  expect(await exited, output).toBe(0);
}

/** The chat server's messages (the fake's state), newest last. */
const chatMessages = async () => (await fake("chatserver", "/__fake/state")).messages as any[];
const runIdOf = (message: any, prefix: string): string =>
  message.components[0].components.find((c: any) => c.custom_id.startsWith(prefix)).custom_id.slice(prefix.length);

it("chat server: /deploy replies with Approve and Reject; Approve completes the waiting run with the approver and updates the message", async () => {
  await install("chatserver", "Authorize");
  const registered = async () =>
    Object.values((await fake("chatserver", "/__fake/state")).commands as Record<string, { name: string }[]>)
      .flat()
      .map((c) => c.name);
  await expect.poll(registered, { timeout: 10_000, interval: 250 }).toEqual(expect.arrayContaining(["deploy", "env"]));

  const asked = await trigger("chatserver", "command", "--name", "deploy", "--text", "web");
  expect(asked.code).toBe(0);
  expect(asked.stdout).toContain('Sent a signed command /deploy "web"');
  expect(asked.stdout).toContain("The project's handler ran.");
  const question = (await chatMessages()).find((m) => m.content === "Deploy web?")!;
  expect(question.components[0].components.map((c: any) => c.label)).toEqual(["Approve", "Reject"]);
  const runId = runIdOf(question, "approve:");
  expect((await run(runId)).waitingFor).toEqual({ name: "approval" });

  const clicked = await trigger("chatserver", "component", "--custom-id", `approve:${runId}`);
  expect(clicked.code).toBe(0);
  expect(clicked.stdout).toContain(`Sent a signed component approve:${runId}`);
  expect(clicked.stdout).toContain("The project's handler ran.");
  expect(await completed(runId)).toEqual({ approved: true, by: "Test User" });
  const updated = (await chatMessages()).find((m) => m.id === question.id);
  expect(updated).toMatchObject({ content: "Deploy web? Approved by Test User.", components: [] });

  // Approve is gone with the buttons: the chat server sends no click for it, and the CLI says so.
  const gone = await trigger("chatserver", "component", "--custom-id", `approve:${runId}`);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toMatch(/shows a component with custom_id "approve:/);
}, 120_000);

it("five approval flows in a row (command, reply with buttons, click, update) all succeed under platform dev, with one note on the deployed public rate", async () => {
  for (let i = 1; i <= 5; i++) {
    const asked = await trigger("chatserver", "command", "--name", "deploy", "--text", `svc${i}`);
    expect(asked.stdout, `flow ${i}`).toContain("The project's handler ran.");
    const question = (await chatMessages()).find((m) => m.content === `Deploy svc${i}?`)!;
    const runId = runIdOf(question, "approve:");
    const clicked = await trigger("chatserver", "component", "--custom-id", `approve:${runId}`);
    expect(clicked.stdout, `flow ${i}`).toContain("The project's handler ran.");
    expect(await completed(runId)).toEqual({ approved: true, by: "Test User" });
    expect((await chatMessages()).find((m) => m.id === question.id)).toMatchObject({ components: [] });
  }
  const notes = dev.output().match(/Note: deployed as a public project this would be refused[^\n]*/g) ?? [];
  expect(notes).toHaveLength(1);
  expect(notes[0]).toContain("`platform dev --public` applies the public limits");
}, 180_000);

it("chat server: Reject opens a modal whose reason reaches the run; a click on a finished run, or a forged run id, is answered privately", async () => {
  await trigger("chatserver", "command", "--name", "deploy", "--text", "api");
  const question = (await chatMessages()).findLast((m) => m.content === "Deploy api?")!;
  const runId = runIdOf(question, "reject:");
  const opened = await trigger("chatserver", "component", "--custom-id", `reject:${runId}`);
  expect(opened.stdout).toContain("The project's handler ran.");
  expect((await fake("chatserver", "/__fake/state")).modals).toMatchObject([
    { customId: `reason:${runId}`, title: "Why reject?" },
  ]);
  const submitted = await trigger(
    "chatserver",
    "modal",
    "--custom-id",
    `reason:${runId}`,
    "--field",
    "reason=not on a Friday",
  );
  expect(submitted.code).toBe(0);
  expect(submitted.stdout).toContain("The project's handler ran.");
  expect(await completed(runId)).toEqual({ approved: false, by: "Test User", reason: "not on a Friday" });
  expect((await chatMessages()).find((m) => m.id === question.id)).toMatchObject({
    content: "Rejected by Test User: not on a Friday",
    components: [],
  });

  // A run decided elsewhere (its event sent through the API) while its buttons are still shown.
  await trigger("chatserver", "command", "--name", "deploy", "--text", "db");
  const stale = (await chatMessages()).findLast((m) => m.content === "Deploy db?")!;
  const staleRun = runIdOf(stale, "approve:");
  await api("POST", `/projects/${slug()}/workflows/${encodeURIComponent(staleRun)}/events`, {
    name: "approval",
    payload: { approved: true, by: "the API" },
  });
  await completed(staleRun);
  await trigger("chatserver", "component", "--custom-id", `approve:${staleRun}`);
  expect((await chatMessages()).at(-1)).toMatchObject({
    content: "This request was already decided (the run is completed).",
    flags: 64,
  });
  expect((await run(staleRun)).result).toEqual({ approved: true, by: "the API" });

  // A button whose customId names something that is not one of this project's runs (the bot's own message,
  // posted straight to the fake with the bot token: any text can be a customId).
  const credentials = JSON.parse(readFileSync(path.join(dir, ".platform/credentials.json"), "utf8"));
  const forged = `${"ab".repeat(32)}.forgedrun000`;
  const posted = await fetch(`${fakeUrl("chatserver")}/api/v10/channels/222222222222222222/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bot ${credentials.plugins.chatserver.botToken}` },
    body: JSON.stringify({
      content: "Deploy everything?",
      components: [{ type: 1, components: [{ type: 2, style: 3, label: "Approve", custom_id: `approve:${forged}` }] }],
    }),
  });
  expect(posted.status).toBe(200);
  await trigger("chatserver", "component", "--custom-id", `approve:${forged}`);
  expect((await chatMessages()).at(-1)).toMatchObject({ content: "This approval request is unknown.", flags: 64 });
}, 120_000);

it("chat server: a click by a member who is not one of the run's approvers is refused privately, and the run keeps waiting", async () => {
  // The red-team's approval: a run whose approvers are someone else, its Approve button clicked by the test user.
  const started = await api("POST", `/projects/${slug()}/workflows`, {
    name: "approval",
    data: { on: "chatserver", what: "prod", approvers: ["999999999999999999"] },
  });
  const runId = started.runId as string;
  const credentials = JSON.parse(readFileSync(path.join(dir, ".platform/credentials.json"), "utf8"));
  const posted = await fetch(`${fakeUrl("chatserver")}/api/v10/channels/222222222222222222/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bot ${credentials.plugins.chatserver.botToken}` },
    body: JSON.stringify({
      content: "Deploy prod?",
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 3, label: "Approve", custom_id: `approve:${runId}` },
            { type: 2, style: 4, label: "Reject", custom_id: `reject:${runId}` },
          ],
        },
      ],
    }),
  });
  expect(posted.status).toBe(200);
  for (const button of ["approve", "reject"]) {
    const clicked = await trigger("chatserver", "component", "--custom-id", `${button}:${runId}`);
    expect(clicked.stdout).toContain("The project's handler ran.");
    expect((await chatMessages()).at(-1)).toMatchObject({
      content: "You are not one of the approvers of this request.",
      flags: 64,
    });
  }
  expect(
    (await fake("chatserver", "/__fake/state")).modals.filter((m: any) => m.customId === `reason:${runId}`),
  ).toEqual([]);
  expect(await run(runId)).toMatchObject({ status: "running", waitingFor: { name: "approval" } });
  expect((await chatMessages()).find((m) => m.content === "Deploy prod?")?.components).toHaveLength(1);
}, 60_000);

it("chat server: a select's chosen value reaches its handler", async () => {
  await trigger("chatserver", "command", "--name", "env");
  const chose = await trigger("chatserver", "component", "--custom-id", "env", "--values", "production");
  expect(chose.code).toBe(0);
  expect(chose.stdout).toContain("Sent a signed component env values production");
  expect((await chatMessages()).findLast((m) => m.content.startsWith("Environment"))).toMatchObject({
    content: "Environment: production",
    components: [],
  });
  const wrong = await trigger("chatserver", "component", "--custom-id", "env", "--values", "moon");
  expect(wrong.code).toBe(1);
}, 60_000);

it("workspace: a token that expires every 2 s is refreshed before each call; block actions approve, a view rejects with its reason", async () => {
  await fake("workspace", "/__fake/token-rotation", { enabled: true, expiresIn: 2 });
  await install("workspace", "Allow");
  const expiry = async () =>
    Date.parse(
      ((await api("GET", `/projects/${slug()}/plugins`)).connections as any[]).find((c) => c.plugin === "workspace")
        .tokenExpiresAt,
    );
  const installedExpiry = await expiry();
  // Past the first token's 2 seconds: the next sendMessage refreshes it first.
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  const asked = await trigger("workspace", "mention", "--text", "deploy web");
  expect(asked.code).toBe(0);
  const messageWithButtons = async () =>
    ((await fake("workspace", "/__fake/chat?resourceId=T0TEST")).channels[0].messages as any[]).findLast((m) =>
      m.rows.some((r: any) => r.kind === "buttons"),
    );
  await expect.poll(messageWithButtons, { timeout: 15_000, interval: 250 }).toBeTruthy();
  const calls = (await fake("workspace", "/__fake/recorded")).calls as any[];
  expect(calls.find((c) => c.method === "chat.postMessage")).toMatchObject({ ok: true });
  const question = await messageWithButtons();
  const runId = (question.rows.find((r: any) => r.kind === "buttons").buttons[0].id as string).slice("approve:".length);

  const clicked = await trigger("workspace", "action", "--action-id", `approve:${runId}`);
  expect(clicked.code).toBe(0);
  expect(clicked.stdout).toContain("The project's handler ran.");
  expect(await completed(runId)).toEqual({ approved: true, by: "alice" });
  expect(clicked.stdout).toMatch(/chat\.update .*text="Approved by alice" → ok/);
  // The pair was refreshed (a later expiry stored) and every call was accepted: none met token_expired.
  expect(await expiry()).toBeGreaterThan(installedExpiry);
  expect(((await fake("workspace", "/__fake/recorded")).calls as any[]).filter((c) => !c.ok)).toEqual([]);

  // A click on the approved run's message is gone with its buttons; another run is rejected through a view.
  await trigger("workspace", "mention", "--text", "deploy api");
  await expect
    .poll(async () => (await messageWithButtons())?.text, { timeout: 15_000, interval: 250 })
    .toBe("Deploy api?");
  const second = await messageWithButtons();
  const secondRun = (second.rows.find((r: any) => r.kind === "buttons").buttons[1].id as string).slice(
    "reject:".length,
  );
  await trigger("workspace", "action", "--action-id", `reject:${secondRun}`);
  const forms = (await fake("workspace", "/__fake/chat?resourceId=T0TEST")).forms;
  expect(forms).toMatchObject([{ id: `reason:${secondRun}`, title: "Why reject?" }]);
  const viewed = await trigger(
    "workspace",
    "view",
    "--callback-id",
    `reason:${secondRun}`,
    "--field",
    "reason=tests are red",
  );
  expect(viewed.code).toBe(0);
  expect(await completed(secondRun)).toEqual({ approved: false, by: "alice", reason: "tests are red" });

  // A click on a finished run's button (its message still shows them) is answered only to the clicker.
  await trigger("workspace", "mention", "--text", "deploy db");
  await expect
    .poll(async () => (await messageWithButtons())?.text, { timeout: 15_000, interval: 250 })
    .toBe("Deploy db?");
  const third = await messageWithButtons();
  const thirdRun = (third.rows.find((r: any) => r.kind === "buttons").buttons[0].id as string).slice("approve:".length);
  await api("POST", `/projects/${slug()}/workflows/${encodeURIComponent(thirdRun)}/events`, {
    name: "approval",
    payload: { approved: false, by: "the API" },
  });
  await completed(thirdRun);
  await trigger("workspace", "action", "--action-id", `approve:${thirdRun}`);
  const messages = (await fake("workspace", "/__fake/chat?resourceId=T0TEST")).channels[0].messages as any[];
  expect(messages.at(-1)).toMatchObject({
    text: "This request was already decided (the run is completed).",
    ephemeral: true,
  });

  // A run whose approvers are someone else: alice's click is answered only to her, and the run keeps waiting.
  const channel = (await fake("workspace", "/__fake/chat?resourceId=T0TEST")).channels[0].id as string;
  const started = await api("POST", `/projects/${slug()}/workflows`, {
    name: "approval",
    data: { on: "workspace", channel, what: "prod", approvers: ["U0BOB"] },
  });
  const guarded = started.runId as string;
  await expect
    .poll(async () => (await messageWithButtons())?.text, { timeout: 15_000, interval: 250 })
    .toBe("Deploy prod?");
  await trigger("workspace", "action", "--action-id", `approve:${guarded}`);
  const afterClick = (await fake("workspace", "/__fake/chat?resourceId=T0TEST")).channels[0].messages as any[];
  expect(afterClick.at(-1)).toMatchObject({
    text: "You are not one of the approvers of this request.",
    ephemeral: true,
  });
  expect(await run(guarded)).toMatchObject({ status: "running", waitingFor: { name: "approval" } });
}, 150_000);

it("workspace: a refresh the fake refuses shows needs_reconnect with the provider's error and an install link in platform plugin status", async () => {
  await fake("workspace", "/__fake/refuse-refresh", { error: "invalid_refresh_token", count: 5 });
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  const echoed = await trigger("workspace", "message", "--text", "still there?");
  expect(echoed.stdout).toMatch(
    /The handler threw revoked: The workspace-chat connection could not refresh its Slack token \(Slack said invalid_refresh_token\)/,
  );
  expect(echoed.code).toBe(1);
  const status = await runCli(["plugin", "status", "--dir", dir]);
  console.log(status.stdout);
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(
    /^workspace: needs_reconnect — the provider refused the token \(invalid_refresh_token\) at /m,
  );
  expect(status.stdout).toMatch(
    /^ {2}Reconnect: open http:\/\/\S+\/install\?code=[0-9a-f]{64} \(one use, valid 2 minutes\)$/m,
  );
}, 60_000);

it("the console's chat window: /deploy typed in the box, Approve clicked in Chromium, the updated message shown", async () => {
  const page = await browser.newPage();
  try {
    await page.goto(signedInConsoleUrl(dir));
    const pane = page.locator('.chat-pane[data-plugin="chatserver"]');
    await pane.getByRole("heading", { name: "chat-server: Test Server" }).waitFor();
    await pane.getByLabel("Say something or run a /command").fill("/deploy console");
    await pane.getByRole("button", { name: "Send" }).click();
    const question = pane.locator(".chat-message", { hasText: "Deploy console?" });
    await question.getByRole("button", { name: "Approve" }).waitFor({ timeout: 20_000 });
    await expect
      .poll(() => pane.locator(".result").textContent(), { timeout: 20_000 })
      .toContain("The project's handler ran.");
    await page.screenshot({ path: artifactPath("console-chat-window-question.png"), fullPage: true });
    await question.getByRole("button", { name: "Approve" }).click();
    await expect
      .poll(() => question.locator(".chat-text").first().textContent(), { timeout: 20_000 })
      .toBe("Deploy console? Approved by Test User.");
    expect(await question.locator(".chat-author").textContent()).toBe("platform-botbot (edited)");
    expect(await question.getByRole("button", { name: "Approve" }).count()).toBe(0);
    await page.screenshot({ path: artifactPath("console-chat-window-approved.png"), fullPage: true });
  } finally {
    await page.close();
  }
}, 90_000);
