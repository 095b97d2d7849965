import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import emailPlugin from "#src/plugins/email-send/index.ts";
import fakeEmailWorker from "#src/dev/fakes/email/index.ts";
import type { EmailPluginEnv } from "#src/plugins/email-send/env.ts";
import { createFakeEmailProvider, type FakeEmailProvider } from "#src/dev/fakes/email/fakeEmailProvider.ts";
import { email } from "#src/runtime/plugins/email.ts";
import { platformRuntime } from "#src/runtime/entry/platformRuntime.ts";
import { PlatformError } from "#src/core/errors.ts";
import { IDENTITY_HEADER } from "#src/core/requestToken.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { userWithProject } from "#test/support/workerd/index.ts";
import { emailPluginWithFake, signedRequest } from "#test/support/workerd/index.ts";

const API_KEY = "re_test_0123456789";

interface Setup {
  fake: FakeEmailProvider;
  env: EmailPluginEnv;
  project: ProjectRow;
  other: ProjectRow;
  /** Calls the plugin's POST /send as `project` with a valid identity token. */
  send(body: unknown, options?: { headers?: Record<string, string>; as?: ProjectRow }): Promise<Response>;
}

async function setup(options: { private?: boolean } = {}): Promise<Setup> {
  const { fake, env } = emailPluginWithFake(API_KEY);
  const { row: project } = await userWithProject("ada@example.com", "alpha", { private: options.private });
  const { row: other } = await userWithProject("bob@example.com", "beta");
  const send = async (body: unknown, o: { headers?: Record<string, string>; as?: ProjectRow } = {}) =>
    emailPlugin.fetch(
      await signedRequest({
        project: o.as ?? project,
        path: "/send",
        body: typeof body === "string" ? body : JSON.stringify(body),
        headers: o.headers,
      }),
      env,
      createExecutionContext(),
    );
  return { fake, env, project, other, send };
}

const ok = { to: "someone@example.com", subject: "Hello", html: "<p>Hi</p>" };

async function errorOf(response: Response, status: number, code: string): Promise<string> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  return body.error.message;
}

describe("email-send plugin: POST /send", () => {
  it("sends from {slug}@{SENDER_DOMAIN} through the provider and answers { id }", async () => {
    const s = await setup();
    const response = await s.send(
      { to: ["a@example.com", "b@example.org"], subject: "Hi", html: "<b>x</b>" },
      { headers: { "Idempotency-Key": "k1" } },
    );
    expect(response.status).toBe(200);
    const { id } = (await response.json()) as { id: string };
    expect(s.fake.sent).toEqual([
      {
        id,
        from: "alpha@mail.example.test",
        to: ["a@example.com", "b@example.org"],
        subject: "Hi",
        html: "<b>x</b>",
        text: null,
        cc: [],
        bcc: [],
        replyTo: [],
        idempotencyKey: `project-${s.project.id}/k1`,
        at: expect.any(String),
      },
    ]);
    expect(s.fake.requests[0]!.headers.authorization).toBe(`Bearer ${API_KEY}`);
  });

  it.each([
    [
      "no identity header",
      async (s: Setup) => {
        const r = await signedRequest({ project: s.project, path: "/send", body: JSON.stringify(ok) });
        const headers = new Headers(r.headers);
        headers.delete(IDENTITY_HEADER);
        return new Request(r.url, { method: "POST", headers, body: JSON.stringify(ok) });
      },
    ],
    [
      "an expired token",
      (s: Setup) =>
        signedRequest({ project: s.project, path: "/send", body: JSON.stringify(ok), nowMS: Date.now() - 120_000 }),
    ],
    [
      "a forged secret",
      (s: Setup) =>
        signedRequest({ project: s.project, path: "/send", body: JSON.stringify(ok), secret: "0".repeat(64) }),
    ],
    [
      "another project's id",
      (s: Setup) =>
        signedRequest({ project: s.project, path: "/send", body: JSON.stringify(ok), asProjectId: s.other.id }),
    ],
    [
      "a token for another body",
      (s: Setup) =>
        signedRequest({
          project: s.project,
          path: "/send",
          body: JSON.stringify(ok),
          signedBody: JSON.stringify({ ...ok, to: "x@example.com" }),
        }),
    ],
  ])("refuses %s with 401, and the provider sees nothing", async (_name, make) => {
    const s = await setup();
    await errorOf(await emailPlugin.fetch(await make(s), s.env, createExecutionContext()), 401, "unauthorized");
    expect(s.fake.requests).toEqual([]);
  });

  it("lets exactly 3 of 100 concurrent sends through; the rest get 429 with Retry-After and send nothing", async () => {
    const s = await setup();
    const responses = await Promise.all(Array.from({ length: 100 }, () => s.send(ok)));
    const passed = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(passed).toHaveLength(3);
    expect(limited).toHaveLength(97);
    for (const r of limited) {
      const retry = Number(r.headers.get("retry-after"));
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(60);
    }
    expect(await errorOf(limited[0]!, 429, "rate_limited")).toMatch(/per 60 seconds/);
    expect(s.fake.sent).toHaveLength(3);
    // Another project has its own counter.
    expect((await s.send(ok, { as: s.other })).status).toBe(200);
  });

  // Issue 11: private deployments are exempt from the proxy rate, never from the email send rate.
  it.each([
    { kind: "private", private: true },
    { kind: "public", private: false },
  ])("lets a $kind project's 6 concurrent sends through 3 at a time; 3 get 429 with Retry-After", async (c) => {
    const s = await setup({ private: c.private });
    const responses = await Promise.all(Array.from({ length: 6 }, () => s.send(ok)));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(3);
    const limited = responses.filter((r) => r.status === 429);
    expect(limited).toHaveLength(3);
    for (const r of limited) expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await errorOf(limited[0]!, 429, "rate_limited")).toMatch(/3 (email sends|plugin actions) per 60 seconds/);
    expect(s.fake.sent).toHaveLength(3);
  });

  const recipients = (n: number) => Array.from({ length: n }, (_, i) => `user${i}@example.com`);
  const MB = 1_048_576;

  it.each([
    ["51 recipients", { ...ok, to: recipients(51) }, 400, "invalid_input", /Too many recipients: 51/],
    ["no recipients", { ...ok, to: [] }, 400, "invalid_input", /non-empty array/],
    ["html of 1 MB + 1 byte", { ...ok, html: "a".repeat(MB + 1) }, 413, "payload_too_large", /1048577 bytes/],
    [
      "html of 1 MB + 1 byte counted in UTF-8 (é is 2 bytes)",
      { ...ok, html: "é".repeat(MB / 2) + "a" },
      413,
      "payload_too_large",
      /limit is 1048576/,
    ],
    ["an empty subject", { ...ok, subject: "  " }, 400, "invalid_input", /subject/],
    ["a 999-character subject", { ...ok, subject: "s".repeat(999) }, 400, "invalid_input", /998/],
    ["a subject with a line break", { ...ok, subject: "Hi\r\nBcc: x@evil.test" }, 400, "invalid_input", /one line/],
    ["no html", { to: ok.to, subject: "x" }, 400, "invalid_input", /html/],
    ["an unsupported field", { ...ok, bcc: "x@example.com" }, 400, "invalid_input", /"bcc"/],
    ["a JSON array body", "[]", 400, "malformed_json", /object/],
  ] as const)("refuses %s before the rate limiter, and sends nothing", async (_name, body, status, code, message) => {
    const s = await setup();
    expect(await errorOf(await s.send(body), status, code)).toMatch(message);
    expect(s.fake.requests).toEqual([]);
    // Refused input took no quota: three good sends still pass.
    for (let i = 0; i < 3; i++) expect((await s.send(ok)).status).toBe(200);
  });

  it.each([
    "Ada <ada@example.com>",
    '"ada"@example.com',
    "ada@example.com, eve@evil.test",
    "ada@example.com\r\nBcc: eve@evil.test",
    "ada example@example.com",
    "ada@@example.com",
    "ada@example",
    "@example.com",
    "ada@",
    ".ada@example.com",
    "ada..b@example.com",
    "ada@-example.com",
    "ada@exa_mple.com",
    "ada@[127.0.0.1]",
    "adä@example.com",
    `${"a".repeat(65)}@example.com`,
    "",
  ])("refuses the malformed address %j", async (address) => {
    const s = await setup();
    expect(await errorOf(await s.send({ ...ok, to: ["fine@example.com", address] }), 400, "invalid_input")).toMatch(
      /^to\[1\]/,
    );
    expect(s.fake.requests).toEqual([]);
  });

  it("accepts 50 recipients, exactly 1 MB of html and a 998-character subject", async () => {
    const s = await setup();
    const response = await s.send({ to: recipients(50), subject: "s".repeat(998), html: "a".repeat(MB) });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(s.fake.sent[0]!.to).toHaveLength(50);
  });

  it("refuses a bad Idempotency-Key; the same key twice sends once and answers the same id", async () => {
    const s = await setup();
    await errorOf(await s.send(ok, { headers: { "Idempotency-Key": "x".repeat(201) } }), 400, "invalid_input");
    const first = (await (await s.send(ok, { headers: { "Idempotency-Key": "order-1" } })).json()) as { id: string };
    const again = (await (await s.send(ok, { headers: { "Idempotency-Key": "order-1" } })).json()) as { id: string };
    expect(again.id).toBe(first.id);
    expect(s.fake.sent).toHaveLength(1);
  });

  it.each([
    [
      "429 rate_limit_exceeded",
      { status: 429, name: "rate_limit_exceeded", message: "Too many requests", retryAfter: 7 },
      429,
      "rate_limited",
      "7",
      /retry in 7 s/,
    ],
    [
      "429 daily_quota_exceeded",
      { status: 429, name: "daily_quota_exceeded", message: "quota", retryAfter: 3600 },
      429,
      "rate_limited",
      "3600",
      /quota/,
    ],
    [
      "403 invalid_api_key",
      { status: 403, name: "invalid_api_key", message: "API key is invalid" },
      502,
      "upstream_error",
      null,
      /API key \(invalid_api_key\)/,
    ],
    [
      "422 validation_error",
      { status: 422, name: "validation_error", message: "domain not verified" },
      400,
      "invalid_input",
      null,
      /validation_error.*domain not verified/,
    ],
    [
      "409 invalid_idempotent_request",
      { status: 409, name: "invalid_idempotent_request", message: "different payload" },
      409,
      "conflict",
      null,
      /idempotency/,
    ],
  ] as const)("maps the provider's %s to a clear error", async (_name, failure, status, code, retryAfter, message) => {
    const s = await setup();
    await s.fake.fetch(
      new Request("https://email.fake/__fake/fail-next", { method: "POST", body: JSON.stringify(failure) }),
    );
    const response = await s.send(ok);
    expect(response.headers.get("retry-after")).toBe(retryAfter);
    expect(await errorOf(response, status, code)).toMatch(message);
    expect(s.fake.sent).toEqual([]);
  });

  it("retries a provider 5xx once with the same idempotency key, then sends", async () => {
    const s = await setup();
    await s.fake.fetch(
      new Request("https://email.fake/__fake/fail-next", {
        method: "POST",
        body: JSON.stringify({ status: 500, name: "internal_server_error", message: "oops" }),
      }),
    );
    const response = await s.send(ok, { headers: { "Idempotency-Key": "k" } });
    expect(response.status).toBe(200);
    expect(s.fake.requests.map((r) => r.headers["idempotency-key"])).toEqual([
      `project-${s.project.id}/k`,
      `project-${s.project.id}/k`,
    ]);
    expect(s.fake.sent).toHaveLength(1);
  });

  it("accepts an identity-signed POST /deploy (nothing to register) and refuses an unsigned one", async () => {
    const s = await setup();
    const signed = await signedRequest({ project: s.project, path: "/deploy", body: JSON.stringify({ plugins: {} }) });
    expect(await (await emailPlugin.fetch(signed, s.env, createExecutionContext())).json()).toEqual({
      ok: true,
      plugin: "email-send",
    });
    await errorOf(
      await emailPlugin.fetch(
        new Request("https://plugin.test/deploy", { method: "POST", body: "{}" }),
        s.env,
        createExecutionContext(),
      ),
      401,
      "unauthorized",
    );
  });

  it("says email needs no install, and 404s unknown routes", async () => {
    const s = await setup();
    expect(
      await errorOf(
        await emailPlugin.fetch(new Request("https://plugin.test/install?code=x"), s.env, createExecutionContext()),
        400,
        "invalid_input",
      ),
    ).toMatch(/needs no install/);
    await errorOf(
      await emailPlugin.fetch(new Request("https://plugin.test/nope"), s.env, createExecutionContext()),
      404,
      "not_found",
    );
  });
});

describe("runtime email.send", () => {
  /** A project worker's env whose EMAIL_PLUGIN is the real plugin worker (counting calls). */
  async function runtime(options: { private?: boolean } = {}) {
    const s = await setup(options);
    const calls: Request[] = [];
    platformRuntime.useEnv({
      PLATFORM_WORKER_SECRET: s.project.worker_secret,
      PLATFORM_PROJECT_ID: String(s.project.id),
      EMAIL_PLUGIN: {
        fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
          const request = new Request(input, init);
          calls.push(request.clone());
          return emailPlugin.fetch(request, s.env, createExecutionContext());
        },
      },
    });
    return { ...s, calls };
  }

  async function rejection(promise: Promise<unknown>): Promise<PlatformError> {
    const error = await promise.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PlatformError);
    return error as PlatformError;
  }

  it("resolves { id } with a fresh idempotency key per call", async () => {
    const r = await runtime();
    const a = await email.send({ to: "x@example.com", subject: "One", html: "<p>1</p>" });
    const b = await email.send({ to: ["y@example.com"], subject: "Two", html: "<p>2</p>" });
    expect(r.fake.sent.map((m) => m.id)).toEqual([a.id, b.id]);
    const keys = r.calls.map((c) => c.headers.get("idempotency-key"));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);
    const again = await email.send({
      to: "x@example.com",
      subject: "One",
      html: "<p>1</p>",
      idempotencyKey: "welcome/42",
    });
    expect(
      await email
        .send({ to: "x@example.com", subject: "One", html: "<p>1</p>", idempotencyKey: "welcome/42" })
        .catch((e: PlatformError) => e.code),
    ).toBe("rate_limited");
    expect(again.id).toBe(r.fake.sent[2]!.id);
  });

  it.each([
    [
      "51 recipients",
      { to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`), subject: "s", html: "h" },
      "invalid_input",
    ],
    ["html of 1 MB + 1 byte", { to: "a@example.com", subject: "s", html: "a".repeat(1_048_577) }, "payload_too_large"],
    ["an empty subject", { to: "a@example.com", subject: "", html: "h" }, "invalid_input"],
    ["a display-name address", { to: "Ada <a@example.com>", subject: "s", html: "h" }, "invalid_input"],
    [
      "a bad idempotency key",
      { to: "a@example.com", subject: "s", html: "h", idempotencyKey: "with space" },
      "invalid_input",
    ],
  ])("rejects %s before any network call", async (_name, input, code) => {
    const r = await runtime();
    expect((await rejection(email.send(input as never))).code).toBe(code);
    expect(r.calls).toEqual([]);
  });

  it("rejects with rate_limited carrying retryAfterSeconds after 3 sends", async () => {
    await runtime();
    for (let i = 0; i < 3; i++) await email.send(ok);
    const error = await rejection(email.send(ok));
    expect(error.code).toBe("rate_limited");
    expect(error.details?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it("fails clearly without the EMAIL_PLUGIN binding", async () => {
    platformRuntime.useEnv({ PLATFORM_WORKER_SECRET: "a".repeat(64), PLATFORM_PROJECT_ID: "1" });
    const error = await rejection(email.send(ok));
    expect(error.code).toBe("not_ready");
    expect(error.message).toMatch(/EMAIL_PLUGIN/);
  });
});

describe("fake email provider", () => {
  it("runs as a worker with the key from FAKE_EMAIL_API_KEY", async () => {
    const env = { FAKE_EMAIL_API_KEY: "re_worker_key" };
    const body = JSON.stringify({ from: "a@mail.example.test", to: "b@example.com", subject: "s", html: "h" });
    const send = (key: string) =>
      fakeEmailWorker.fetch(
        new Request("https://email.fake/emails", {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body,
        }),
        env,
      );
    const refused = await send("re_other");
    expect(refused.status).toBe(403);
    const accepted = await send("re_worker_key");
    const { id } = (await accepted.json()) as { id: string };
    const listed = (await (await fakeEmailWorker.fetch(new Request("https://email.fake/__fake/sent"), env)).json()) as {
      sent: { id: string; to: string[] }[];
    };
    expect(listed.sent).toEqual([expect.objectContaining({ id, to: ["b@example.com"] })]);
  });

  const post = (
    fake: FakeEmailProvider,
    body: unknown,
    headers: Record<string, string> = { authorization: `Bearer ${API_KEY}` },
  ) =>
    fake.fetch(
      new Request("https://email.fake/emails", {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
      }),
    );
  const mail = { from: "alpha@mail.example.test", to: ["a@example.com"], subject: "s", html: "h" };

  it.each([
    ["no key", {}, mail, 401, "missing_api_key"],
    ["a wrong key", { authorization: "Bearer re_wrong" }, mail, 403, "invalid_api_key"],
    [
      "51 recipients",
      undefined,
      { ...mail, to: Array.from({ length: 51 }, (_, i) => `u${i}@example.com`) },
      422,
      "validation_error",
    ],
    ["no subject", undefined, { from: mail.from, to: mail.to, html: "h" }, 422, "missing_required_field"],
  ] as const)("refuses %s like the provider", async (_name, headers, body, status, name) => {
    const fake = createFakeEmailProvider({ apiKey: API_KEY });
    const response = await post(fake, body, headers as Record<string, string> | undefined);
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ statusCode: status, name });
    expect(fake.sent).toEqual([]);
  });

  it("answers the same id for a reused Idempotency-Key, 409 for the same key with another body, and lists what it sent", async () => {
    const fake = createFakeEmailProvider({ apiKey: API_KEY });
    const headers = { authorization: `Bearer ${API_KEY}`, "idempotency-key": "k" };
    const a = (await (await post(fake, mail, headers)).json()) as { id: string };
    const b = (await (await post(fake, mail, headers)).json()) as { id: string };
    expect(b.id).toBe(a.id);
    const conflict = await post(fake, { ...mail, subject: "other" }, headers);
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toMatchObject({ name: "invalid_idempotent_request" });
    const listed = (await (await fake.fetch(new Request("https://email.fake/__fake/sent"))).json()) as {
      sent: { id: string }[];
    };
    expect(listed.sent.map((m) => m.id)).toEqual([a.id]);
  });
});
