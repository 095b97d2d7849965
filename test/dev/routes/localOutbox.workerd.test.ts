import { describe, expect, it } from "vitest";
import { createFakeEmailProvider } from "#src/dev/fakes/email/fakeEmailProvider.ts";
import type { DevApiEnv } from "#src/dev/routes/devApiEnv.ts";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { apiHarness, callApi as callAnyApi, expectError, userWithProject } from "#test/support/workerd/index.ts";

const API_KEY = "re_outbox_test";
const DOMAIN = "mail.platform.local";

/** The dev API worker with the real fake email provider (in memory) bound, as `platform dev` binds it. */
async function outboxWorld() {
  const fake = createFakeEmailProvider({ apiKey: API_KEY });
  const contacted: string[] = [];
  const fetcher = {
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      contacted.push(new URL(request.url).pathname);
      return fake.fetch(request);
    },
  } as unknown as Fetcher;
  const send = async (from: string, subject: string) => {
    const response = await fake.fetch(
      new Request("https://email.fake/emails", {
        method: "POST",
        headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({ from, to: ["ada@example.com"], subject, html: `<p>${subject}</p>` }),
      }),
    );
    return ((await response.json()) as { id: string }).id;
  };
  const ada = await userWithProject("ada@example.com", "alpha");
  const bob = await userWithProject("bob@example.com", "beta");
  const env: DevApiEnv = { ...apiHarness().env, FAKE_EMAIL: fetcher, EMAIL_SENDER_DOMAIN: DOMAIN };
  const call = (path: string, options: { token?: string; env?: DevApiEnv } = {}) =>
    callAnyApi("GET", path, {
      ...(options.token === undefined ? {} : { token: options.token }),
      env: options.env ?? env,
      worker: devApi,
    });
  return { send, ada, bob, env, call, contacted };
}

describe("GET /projects/:slug/outbox and /outbox/:id (the local outbox)", () => {
  it("lists only the project's own emails, newest first, without their html; shows one with its html", async () => {
    const w = await outboxWorld();
    const first = await w.send(`alpha@${DOMAIN}`, "First");
    await w.send(`beta@${DOMAIN}`, "Beta's");
    // Same local part, another domain: not the project's sender (anyone local may post to the fake).
    await w.send("alpha@elsewhere.example", "Spoofed");
    const second = await w.send(`Alpha <alpha@${DOMAIN}>`, "Second");

    const listed = await w.call("/projects/alpha/outbox", { token: w.ada.user.token });
    expect(listed.status).toBe(200);
    expect(listed.headers.get("cache-control")).toBe("no-store");
    const { emails } = (await listed.json()) as { emails: Record<string, unknown>[] };
    expect(emails.map((e) => [e.id, e.subject])).toEqual([
      [second, "Second"],
      [first, "First"],
    ]);
    expect(emails[0]).toEqual({
      id: second,
      from: `Alpha <alpha@${DOMAIN}>`,
      to: ["ada@example.com"],
      subject: "Second",
      sentAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    const shown = await w.call(`/projects/alpha/outbox/${first}`, { token: w.ada.user.token });
    expect(shown.status).toBe(200);
    expect(((await shown.json()) as { email: unknown }).email).toEqual({
      id: first,
      from: `alpha@${DOMAIN}`,
      to: ["ada@example.com"],
      subject: "First",
      html: "<p>First</p>",
      text: null,
      sentAt: expect.any(String),
    });
  });

  it("answers an empty list for a project that sent nothing", async () => {
    const w = await outboxWorld();
    await w.send(`alpha@${DOMAIN}`, "Alpha's");
    const listed = await w.call("/projects/beta/outbox", { token: w.bob.user.token });
    expect(await listed.json()).toEqual({ emails: [] });
  });

  it.each([
    ["the list without a CLI token", "list", { token: false }, 401, "unauthorized"],
    ["an email without a CLI token", "own", { token: false }, 401, "unauthorized"],
    ["a forged CLI token", "list", { token: "forged" }, 401, "unauthorized"],
    ["another user's project (list)", "list", { as: "bob" }, 404, "not_found"],
    ["another user's project (email)", "own", { as: "bob" }, 404, "not_found"],
    [
      "another project's email, asked for through one's own project",
      "beta's",
      { as: "bob", slug: "beta" },
      404,
      "not_found",
    ],
    ["the spoofed sender's email", "spoofed", {}, 404, "not_found"],
    ["an id that does not exist", "unknown", {}, 404, "not_found"],
    ["a malformed id", "malformed", {}, 400, "invalid_input"],
    ["an oversized id", "oversized", {}, 400, "invalid_input"],
    ["the dev API without the fake email provider", "list", { noFake: true }, 404, "not_found"],
  ] as const)("refuses %s", async (_name, what, c: Record<string, unknown>, status, code) => {
    const w = await outboxWorld();
    const ids: Record<string, string> = {
      own: await w.send(`alpha@${DOMAIN}`, "Alpha's"),
      "beta's": await w.send(`alpha@${DOMAIN}`, "Also alpha's"),
      spoofed: await w.send("alpha@elsewhere.example", "Spoofed"),
      unknown: crypto.randomUUID(),
      malformed: "../__fake/sent",
      oversized: "a".repeat(5000),
    };
    const slug = (c.slug as string | undefined) ?? "alpha";
    const path =
      what === "list" ? `/projects/${slug}/outbox` : `/projects/${slug}/outbox/${encodeURIComponent(ids[what]!)}`;
    const token = c.token === false ? undefined : ((c.token as string) ?? (c.as === "bob" ? w.bob : w.ada).user.token);
    const contactedBefore = w.contacted.length;
    const response = await w.call(path, {
      token,
      ...(c.noFake ? { env: { ...w.env, FAKE_EMAIL: undefined } } : {}),
    });
    await expectError(response, status, code);
    if (status !== 404 || c.noFake) expect(w.contacted.length).toBe(contactedBefore);
  });
});

describe("the deployed API worker (src/workers/api/index.ts)", () => {
  it("has no outbox route", async () => {
    const w = await outboxWorld();
    const response = await callAnyApi("GET", "/projects/alpha/outbox", { token: w.ada.user.token, env: w.env });
    await expectError(response, 404, "not_found");
    expect(w.contacted).toEqual([]);
  });
});
