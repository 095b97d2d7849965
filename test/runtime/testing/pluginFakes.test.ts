import { describe, expect, it } from "vitest";
import { signRequestToken } from "#src/core/requestToken.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { defineWorkflow, type WorkflowSteps } from "#src/engine/api/definition.ts";
import { chatserver, email, workspace, type EmailSendInput } from "platform";
import { TEST_PROJECT, testWorkflow } from "platform/testing";

const START = Date.UTC(2026, 0, 1);

/** Runs a one-step workflow whose step makes `call`, and answers the run. */
async function runStep(call: () => Promise<unknown>) {
  const steps: WorkflowSteps = { start: async () => ({ done: true, result: (await call()) ?? null }) };
  return testWorkflow(defineWorkflow("plugin-call", steps, { maxAttempts: 1 }), null, { startAt: START });
}

const ok: EmailSendInput = { to: "ada@example.com", subject: "Your order", html: "<p>Shipped.</p>" };

// The email fake checks what the email-send plugin checks (contracts/emailMessage.ts), whoever calls it: each row
// is refused with the plugin's status and code before anything reaches the outbox.
const refused: { name: string; input: EmailSendInput; status: number; code: string; message: RegExp }[] = [
  {
    name: "51 recipients",
    input: { ...ok, to: Array.from({ length: 51 }, (_, i) => `r${i}@example.com`) },
    status: 400,
    code: "invalid_input",
    message: /at most 50/,
  },
  {
    name: "html over 1 MB",
    input: { ...ok, html: "x".repeat(1_048_577) },
    status: 413,
    code: "payload_too_large",
    message: /1048576|1 MB/,
  },
  { name: "an empty subject", input: { ...ok, subject: " " }, status: 400, code: "invalid_input", message: /subject/ },
  {
    name: "a two-line subject",
    input: { ...ok, subject: "a\nb" },
    status: 400,
    code: "invalid_input",
    message: /one line/,
  },
  {
    name: "a display-name address",
    input: { ...ok, to: "Ada <ada@example.com>" },
    status: 400,
    code: "invalid_input",
    message: /^to "Ada <ada@example.com>"/,
  },
  { name: "no recipients", input: { ...ok, to: [] }, status: 400, code: "invalid_input", message: /^to must be/ },
];

/** From inside a step: a POST to a plugin binding signed with the test project's secret (or `secret`). */
async function signedPluginCall(binding: string, path: string, input: unknown, secret?: string) {
  const env = platformRuntime.env!;
  const body = JSON.stringify(input);
  const token = await signRequestToken(
    "identity",
    { method: "POST", pathAndQuery: path, body },
    { projectId: TEST_PROJECT.id, secret: secret ?? env.PLATFORM_WORKER_SECRET! },
  );
  const response = await (env[binding] as Fetcher).fetch(`https://plugin.internal${path}`, {
    method: "POST",
    headers: { "X-Platform-Identity": token, "content-type": "application/json" },
    body,
  });
  return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
}

describe("plugin fakes: email.send from a step", () => {
  it("lands in run.outbox as { to, subject, html } and answers { id }", async () => {
    const run = await runStep(() => email.send({ ...ok, to: ["ada@example.com", "bob@example.com"] }));
    const { id } = await run.result<{ id: string }>();
    expect(id).toMatch(/^test-email-\d+$/);
    expect(run.outbox).toEqual([{ to: ["ada@example.com", "bob@example.com"], subject: ok.subject, html: ok.html }]);
    expect(run.calls).toEqual([
      {
        plugin: "email-send",
        action: "send",
        input: { to: ["ada@example.com", "bob@example.com"], subject: ok.subject, html: ok.html },
        answer: { id },
      },
    ]);
  });

  it.each(refused)("refuses $name with $status $code, and sends nothing", async ({ input, status, code, message }) => {
    // The runtime checks first (no call is made) ...
    const viaRuntime = await runStep(() => email.send(input));
    await expect(viaRuntime.result()).rejects.toMatchObject({
      code: "workflow_failed",
      message: expect.stringMatching(message),
    });
    expect(viaRuntime.calls).toEqual([]);
    // ... and the fake checks again, as the plugin worker does for a caller that skipped the runtime.
    const direct = await runStep(() => signedPluginCall("EMAIL_PLUGIN", "/send", input));
    await expect(direct.result()).resolves.toEqual({
      status,
      body: { error: { code, message: expect.stringMatching(message) } },
    });
    expect(direct.outbox).toEqual([]);
    expect(direct.calls).toEqual([]);
  });

  it("a retried step that reuses its idempotency key sends once, as the real plugin does", async () => {
    const steps: WorkflowSteps = {
      start: async (ctx) => {
        const { id } = await email.send({ ...ok, idempotencyKey: `welcome-${ctx.runId}` });
        if (ctx.attempt === 1) throw new Error("crashed after sending");
        return { done: true, result: id };
      },
    };
    const run = await testWorkflow(defineWorkflow("retried-send", steps, { maxAttempts: 2 }), null, { startAt: START });
    await expect(run.result()).resolves.toMatch(/^test-email-/);
    expect(run.outbox).toHaveLength(1);
    expect(run.calls).toHaveLength(2);
    expect(run.calls[0]!.answer).toEqual(run.calls[1]!.answer);
  });

  it("two runs driven at once keep their own outboxes", async () => {
    const to = (name: string) => `${name}@example.com`;
    const steps: WorkflowSteps = {
      start: async (ctx) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        await email.send({ ...ok, to: to(ctx.data.name) });
        return { step: "again" };
      },
      again: async (ctx) => {
        await email.send({ ...ok, to: to(ctx.data.name), subject: "Again" });
        return { done: true };
      },
    };
    const definition = defineWorkflow("concurrent", steps);
    const [ada, bob] = await Promise.all([
      testWorkflow(definition, { name: "ada" }),
      testWorkflow(definition, { name: "bob" }),
    ]);
    expect(ada.outbox.map((m) => [m.to, m.subject])).toEqual([
      [[to("ada")], ok.subject],
      [[to("ada")], "Again"],
    ]);
    expect(bob.outbox.map((m) => [m.to, m.subject])).toEqual([
      [[to("bob")], ok.subject],
      [[to("bob")], "Again"],
    ]);
  });
});

describe("plugin fakes: chat server and workspace chat", () => {
  // Each call is recorded with the body the plugin receives and answered with the plugin's answer shape.
  const calls: { name: string; call: () => Promise<unknown>; record: object; answer: RegExp | object }[] = [
    {
      name: "chatserver.sendMessage",
      call: () => chatserver.sendMessage("1234567890", "Shipped!"),
      record: { plugin: "chatserver", action: "send-message", input: { channelId: "1234567890", content: "Shipped!" } },
      answer: { messageId: expect.stringMatching(/^\d+$/), channelId: "1234567890" },
    },
    {
      name: "chatserver.editMessage",
      call: () => chatserver.editMessage("1234567890", "42", "Edited"),
      record: {
        plugin: "chatserver",
        action: "edit-message",
        input: { channelId: "1234567890", messageId: "42", content: "Edited" },
      },
      answer: { messageId: "42", channelId: "1234567890" },
    },
    {
      name: "workspace.sendMessage",
      call: () => workspace.sendMessage("C0123456789", "Shipped!"),
      record: { plugin: "workspace", action: "send-message", input: { channel: "C0123456789", text: "Shipped!" } },
      answer: { channel: "C0123456789", ts: expect.stringMatching(/^\d+\.\d{6}$/) },
    },
    {
      name: "workspace.threadReply",
      call: () => workspace.threadReply("C0123456789", "1712345678.000100", "In the thread"),
      record: {
        plugin: "workspace",
        action: "thread-reply",
        input: { channel: "C0123456789", threadTs: "1712345678.000100", text: "In the thread" },
      },
      answer: { channel: "C0123456789", ts: expect.stringMatching(/^\d+\.\d{6}$/), threadTs: "1712345678.000100" },
    },
    {
      name: "workspace.addReaction",
      call: () => workspace.addReaction("C0123456789", "1712345678.000100", "thumbsup"),
      record: {
        plugin: "workspace",
        action: "add-reaction",
        input: { channel: "C0123456789", ts: "1712345678.000100", name: "thumbsup" },
      },
      answer: { ok: true },
    },
  ];

  it.each(calls)("$name is recorded and answered like the provider", async ({ call, record, answer }) => {
    const run = await runStep(call);
    expect(run.view.status).toBe("completed");
    expect(run.calls).toEqual([{ ...record, answer }]);
    expect(run.outbox).toEqual([]);
  });
});

describe("plugin fakes: the identity token", () => {
  it("a call signed with another secret is refused as unauthorized, and records nothing", async () => {
    const run = await runStep(() => signedPluginCall("EMAIL_PLUGIN", "/send", ok, "not-the-project-secret"));
    await expect(run.result()).resolves.toMatchObject({ status: 401, body: { error: { code: "unauthorized" } } });
    expect(run.outbox).toEqual([]);
    expect(run.calls).toEqual([]);
  });

  it("a plugin route the plugin does not have answers 404", async () => {
    const run = await runStep(() => signedPluginCall("WORKSPACE_PLUGIN", "/proxy/delete-channel", {}));
    await expect(run.result()).resolves.toMatchObject({ status: 404, body: { error: { code: "not_found" } } });
    expect(run.calls).toEqual([]);
  });
});
