// Where the fake Slack used to accept or leave out what Slack refuses or serves (issue 33 item 7): each test
// fails on the old fake.
import { describe, expect, it } from "vitest";
import { MAX_VIEW_BYTES } from "#src/dev/fakes/workspace/fakeBlockRules.ts";
import { RESPONSE_URL_TTL_MS } from "#src/dev/fakes/workspace/fakeResponseUrls.ts";
import { reasonModal } from "#test/support/chat/reasonModal.ts";
import { BASE, fake, install, api } from "./fakeWorkspace.fixture.ts";

const approveRow = {
  type: "actions",
  elements: [{ type: "button", action_id: "approve:1", text: { type: "plain_text", text: "Approve" }, value: "1" }],
};
const modal = reasonModal({ callbackId: "why", title: "Why?", submit: "Send" });

async function world() {
  let clock = 1_800_000_000_000;
  /** What the app answers the next interactivity delivery with. */
  let answer = new Response(null, { status: 200 });
  const slack = fake({ now: () => clock, deliver: async () => answer.clone() });
  const { access_token } = await install(slack);
  const method = async (name: string, params: Record<string, unknown>) =>
    (await (await api(slack, name, access_token, params)).json()) as Record<string, any>;
  const trigger = async (params: Record<string, unknown>) =>
    (
      await slack.fetch(
        new Request(`${BASE}/__fake/trigger`, {
          method: "POST",
          body: JSON.stringify(params),
          headers: { "content-type": "application/json" },
        }),
      )
    ).json() as Promise<Record<string, any>>;
  const chat = async () => (await (await slack.fetch(new Request(`${BASE}/__fake/chat`))).json()) as any;
  const respond = (url: string, body: unknown) =>
    slack.fetch(
      new Request(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } }),
    );
  return {
    method,
    trigger,
    chat,
    respond,
    advance: (ms: number) => (clock += ms),
    answerWith: (body: unknown) => (answer = Response.json(body)),
  };
}

/** A click on the approve button of a fresh message: the delivered block_actions payload. */
async function click(w: Awaited<ReturnType<typeof world>>) {
  await w.method("chat.postMessage", { channel: "C0GENERAL", text: "Deploy?", blocks: [approveRow] });
  return (await w.trigger({ kind: "action", actionId: "approve:1" })).delivered as Record<string, any>;
}

describe("fake Slack: as strict as Slack", () => {
  it("a second views.open with one trigger_id is exchanged_trigger_id", async () => {
    const w = await world();
    const { trigger_id } = await click(w);
    expect(await w.method("views.open", { trigger_id, view: modal })).toMatchObject({ ok: true });
    expect(await w.method("views.open", { trigger_id, view: modal })).toEqual({
      ok: false,
      error: "exchanged_trigger_id",
    });
  });

  it("a click's response_url takes an ephemeral reply, an in_channel one, a replacement and a deletion", async () => {
    const w = await world();
    const { response_url } = await click(w);
    expect(response_url.startsWith(`${BASE}/actions/`)).toBe(true);
    expect(await (await w.respond(response_url, { text: "Only you" })).json()).toEqual({ ok: true });
    expect((await w.respond(response_url, { text: "Everyone", response_type: "in_channel" })).status).toBe(200);
    expect((await w.respond(response_url, { replace_original: true, text: "Approved" })).status).toBe(200);
    let messages = (await w.chat()).channels[0].messages;
    expect(messages.map((m: any) => [m.text, m.ephemeral, m.edited])).toEqual([
      ["Approved", false, true],
      ["Only you", true, false],
      ["Everyone", false, false],
    ]);
    expect((await w.respond(response_url, { delete_original: true })).status).toBe(200);
    messages = (await w.chat()).channels[0].messages;
    expect(messages.map((m: any) => m.text)).toEqual(["Only you", "Everyone"]);
  });

  it.each([
    ["a sixth use", 0, 5, "used_url"],
    ["a use after 30 minutes", RESPONSE_URL_TTL_MS + 1, 0, "expired_url"],
  ])("a response_url refuses %s with 404 %s", async (_name, later, uses, error) => {
    const w = await world();
    const { response_url } = await click(w);
    for (let i = 0; i < uses; i++) expect((await w.respond(response_url, { text: `#${i}` })).status).toBe(200);
    w.advance(later);
    const refused = await w.respond(response_url, { text: "late" });
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ ok: false, error });
  });

  it("a view_submission answered with response_action update replaces the open view; an invalid one keeps it", async () => {
    const w = await world();
    const { trigger_id } = await click(w);
    const opened = await w.method("views.open", { trigger_id, view: modal });
    const next = reasonModal({ callbackId: "why2", title: "Really?", submit: "Yes" });
    w.answerWith({ response_action: "update", view: next });
    const out = await w.trigger({ kind: "view", callbackId: "why", fields: { reason: "Friday" } });
    expect(out.view).toMatchObject({ open: true, updated: { id: opened.view.id, callback_id: "why2" } });
    expect((await w.chat()).forms).toEqual([expect.objectContaining({ id: "why2", title: "Really?" })]);
    w.answerWith({ response_action: "update", view: { ...next, title: { type: "plain_text", text: "" } } });
    const refused = await w.trigger({ kind: "view", callbackId: "why2", fields: { reason: "x" } });
    expect(refused.view).toEqual({
      open: true,
      refused: "[ERROR] view.title: must be between 1 and 24 characters",
    });
    expect((await w.chat()).forms).toEqual([expect.objectContaining({ id: "why2", title: "Really?" })]);
  });

  const context = (n: number) => ({
    type: "context",
    elements: Array.from({ length: n }, (_, i) => ({ type: "mrkdwn", text: `e${i}` })),
  });
  it.each([
    [
      "a context block of 11 elements",
      [context(11)],
      "[ERROR] blocks[0].elements: must provide between 1 and 10 elements",
    ],
    [
      "an image without image_url or slack_file",
      [{ type: "image", alt_text: "chart" }],
      "[ERROR] blocks[0]: must provide either image_url or slack_file",
    ],
    [
      "an image without alt_text",
      [{ type: "image", image_url: "https://example.com/a.png" }],
      "[ERROR] blocks[0].alt_text: must be between 1 and 2000 characters",
    ],
  ])("chat.postMessage refuses %s (invalid_blocks)", async (_name, blocks, message) => {
    const w = await world();
    expect(await w.method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks })).toEqual({
      ok: false,
      error: "invalid_blocks",
      response_metadata: { messages: [message] },
    });
  });

  it("a context of 10 elements and an image with its url and alt_text are accepted", async () => {
    const w = await world();
    const blocks = [context(10), { type: "image", image_url: "https://example.com/a.png", alt_text: "chart" }];
    expect(await w.method("chat.postMessage", { channel: "C0GENERAL", text: "x", blocks })).toMatchObject({ ok: true });
  });

  it("views.open refuses a view over 250,000 bytes of JSON (invalid_arguments)", async () => {
    const w = await world();
    const { trigger_id } = await click(w);
    const big = {
      ...modal,
      blocks: Array.from({ length: 90 }, () => ({
        type: "section",
        text: { type: "mrkdwn", text: "x".repeat(2990) },
      })),
    };
    expect(new TextEncoder().encode(JSON.stringify(big)).length).toBeGreaterThan(MAX_VIEW_BYTES);
    expect(await w.method("views.open", { trigger_id, view: big })).toEqual({
      ok: false,
      error: "invalid_arguments",
      response_metadata: { messages: [`[ERROR] view: must be no larger than ${MAX_VIEW_BYTES} bytes of JSON`] },
    });
  });
});
