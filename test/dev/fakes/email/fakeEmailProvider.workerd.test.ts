// The fake email provider keeps what Resend keeps of POST /emails (resend-openapi SendEmailRequest): a
// text-only email with its text, cc / bcc / reply_to as addresses or lists; the plugin's own client
// (emailProvider.ts) still sends { from, to, subject, html } and gets its id back.
import { describe, expect, it } from "vitest";
import { createFakeEmailProvider } from "#src/dev/fakes/email/fakeEmailProvider.ts";
import type { EmailPluginEnv } from "#src/plugins/email-send/env.ts";
import { sendThroughProvider } from "#src/plugins/email-send/emailProvider.ts";

const API_KEY = "re_test_0123456789";
const FROM = "Alpha <alpha@mail.example.test>";

function setup() {
  const fake = createFakeEmailProvider({ apiKey: API_KEY });
  const send = (body: Record<string, unknown>) =>
    fake.fetch(
      new Request("https://email.fake/emails", {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ from: FROM, to: "ada@example.com", subject: "Hello", ...body }),
      }),
    );
  const outbox = async (id: string) =>
    ((await (await fake.fetch(new Request(`https://email.fake/__fake/outbox/${id}`))).json()) as { email: any }).email;
  return { fake, send, outbox };
}

describe("fake email provider: what Resend keeps", () => {
  it("a text-only email is accepted and kept with its text (html null)", async () => {
    const { send, outbox } = setup();
    const response = await send({ text: "Plain words." });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    expect(await outbox(id)).toMatchObject({ id, html: null, text: "Plain words.", cc: [], bcc: [], replyTo: [] });
  });

  it("html and text together are both kept; cc, bcc and reply_to as an address or a list, display names too", async () => {
    const { send, outbox } = setup();
    const response = await send({
      html: "<p>Hi</p>",
      text: "Hi",
      cc: "bob@example.com",
      bcc: ["carol@example.com", "Dan <dan@example.com>"],
      reply_to: "Support <support@example.com>",
    });
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    expect(await outbox(id)).toMatchObject({
      html: "<p>Hi</p>",
      text: "Hi",
      cc: ["bob@example.com"],
      bcc: ["carol@example.com", "Dan <dan@example.com>"],
      replyTo: ["Support <support@example.com>"],
    });
  });

  it.each([
    ["neither html nor text", {}, "Either `html` or `text` must be provided."],
    ["text that is not a string", { text: 42 }, "Invalid `text` field."],
    ["a cc that is no address", { html: "<p>x</p>", cc: "not an address" }, "Invalid `cc` field."],
    ["a bcc list with a non-string", { html: "<p>x</p>", bcc: ["a@example.com", 7] }, "Invalid `bcc` field."],
    [
      "a reply_to that is an object",
      { html: "<p>x</p>", reply_to: { email: "a@example.com" } },
      "Invalid `reply_to` field.",
    ],
  ] as const)("refuses %s with 422 validation_error", async (_name, body, message) => {
    const { send, fake } = setup();
    const response = await send(body);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ statusCode: 422, name: "validation_error", message });
    expect(fake.sent).toEqual([]);
  });

  it("the plugin's client still sends { from, to, subject, html } and gets the id the outbox keeps", async () => {
    const { fake, outbox } = setup();
    const env = {
      EMAIL_API_KEY: API_KEY,
      EMAIL_API_BASE: "https://email.fake",
      EMAIL_API: { fetch: (input: RequestInfo | URL, init?: RequestInit) => fake.fetch(new Request(input, init)) },
    } as unknown as EmailPluginEnv;
    const { id } = await sendThroughProvider(
      env,
      { from: FROM, to: ["ada@example.com"], subject: "Receipt", html: "<p>Paid</p>" },
      "receipt/1",
    );
    expect(await outbox(id)).toMatchObject({ html: "<p>Paid</p>", text: null, idempotencyKey: "receipt/1" });
  });
});
