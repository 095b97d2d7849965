// Resend's GET /emails/{id} and POST /emails/batch, served as Resend serves them (both were 404 on the old fake).
import { describe, expect, it } from "vitest";
import { createFakeEmailProvider } from "#src/dev/fakes/email/fakeEmailProvider.ts";

const API_KEY = "re_test_0123456789";
const FROM = "Alpha <alpha@mail.example.test>";
const NOW = Date.parse("2026-11-20T12:00:00Z");

function setup() {
  const fake = createFakeEmailProvider({ apiKey: API_KEY, now: () => NOW });
  const api = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    fake.fetch(
      new Request(`https://email.fake${path}`, {
        method,
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
  return { fake, api };
}

const email = (n: number) => ({ from: FROM, to: `user${n}@example.com`, subject: `Hello ${n}`, html: `<p>${n}</p>` });

describe("fake email provider: retrieve and batch as Resend's", () => {
  it("GET /emails/{id} answers the email object; an unknown id is 404 not_found; another key is 403", async () => {
    const { api } = setup();
    const { id } = (await (await api("POST", "/emails", { ...email(1), cc: "bob@example.com" })).json()) as {
      id: string;
    };
    const got = await api("GET", `/emails/${id}`);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual({
      object: "email",
      id,
      from: FROM,
      to: ["user1@example.com"],
      subject: "Hello 1",
      html: "<p>1</p>",
      text: null,
      cc: ["bob@example.com"],
      bcc: [],
      reply_to: [],
      created_at: "2026-11-20T12:00:00.000Z",
      scheduled_at: null,
      last_event: "delivered",
    });
    const unknown = await api("GET", `/emails/${crypto.randomUUID()}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ statusCode: 404, name: "not_found", message: "Email not found" });
    expect((await api("GET", `/emails/${id}`, undefined, { authorization: "Bearer re_other" })).status).toBe(403);
  });

  it("POST /emails/batch sends up to 100 and answers their ids in order; a repeat with its key sends nothing more", async () => {
    const { api, fake } = setup();
    const batch = [email(1), email(2)];
    const first = await api("POST", "/emails/batch", batch, { "idempotency-key": "batch-1" });
    expect(first.status).toBe(200);
    const { data } = (await first.json()) as { data: { id: string }[] };
    expect(data).toHaveLength(2);
    expect(fake.sent.map((e) => [e.id, e.subject])).toEqual([
      [data[0]!.id, "Hello 1"],
      [data[1]!.id, "Hello 2"],
    ]);
    const again = await api("POST", "/emails/batch", batch, { "idempotency-key": "batch-1" });
    expect(await again.json()).toEqual({ data });
    expect(fake.sent).toHaveLength(2);
  });

  it.each([
    ["an empty batch", [], "A batch is an array of 1 to 100 emails."],
    ["101 emails", Array.from({ length: 101 }, (_, i) => email(i)), "A batch is an array of 1 to 100 emails."],
    ["one object instead of an array", email(1), "A batch is an array of 1 to 100 emails."],
    ["one bad email among good ones", [email(1), { ...email(2), to: "nobody" }], "emails[1]: Invalid `to` field."],
  ] as const)("POST /emails/batch refuses %s with 422 and sends none", async (_name, body, message) => {
    const { api, fake } = setup();
    const response = await api("POST", "/emails/batch", body);
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({ statusCode: 422, name: "validation_error", message });
    expect(fake.sent).toEqual([]);
  });
});
