import { describe, expect, it } from "vitest";
import { browserLogin, machineName } from "#src/dev/cli/credentials/browserLogin.ts";

type Answer = { status: number; body: unknown } | Error;

/** A fake API: `POST /cli/login` answers `start`, each `POST /cli/login/token` the next of `polls`. */
function fakeApi(start: Answer, polls: Answer[]) {
  const seen: { url: string; body: unknown }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    seen.push({ url, body: JSON.parse(String(init.body)) });
    const answer = url.endsWith("/cli/login") ? start : (polls.shift() ?? new Error("no more answers"));
    if (answer instanceof Error) throw answer;
    return Response.json(answer.body, { status: answer.status });
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const STARTED = {
  status: 201,
  body: { loginUrl: "https://login.test/cli?code=abc", pollToken: "P", verification: "ABCD-1234" },
};

async function run(start: Answer, polls: Answer[]) {
  const api = fakeApi(start, polls);
  const shown: unknown[] = [];
  let pending = 0;
  const outcome = await browserLogin("https://api.test", "ada-laptop", {
    fetch: api.fetch,
    sleep: async () => {},
    show: async (login) => void shown.push(login),
    onPending: () => pending++,
  });
  return { outcome, shown, pending, seen: api.seen };
}

describe("browserLogin", () => {
  it("shows the link, waits while pending (and through a restart), then returns the token", async () => {
    const { outcome, shown, pending, seen } = await run(STARTED, [
      { status: 200, body: { status: "pending" } },
      new Error("ECONNREFUSED"),
      { status: 503, body: {} },
      { status: 200, body: { status: "approved", token: "plt_x", email: "ada@example.com" } },
    ]);
    expect(outcome).toEqual({ ok: true, token: "plt_x", email: "ada@example.com" });
    expect(shown).toEqual([STARTED.body]);
    expect(pending).toBe(1);
    expect(seen[0]).toEqual({ url: "https://api.test/cli/login", body: { host: "ada-laptop" } });
    expect(seen.slice(1).every((s) => JSON.stringify(s.body) === '{"pollToken":"P"}')).toBe(true);
  });

  it.each([
    [
      "a refusal in the browser",
      { status: 403, body: { error: { message: "The sign-in was refused in the browser." } } },
      /refused/,
    ],
    ["an expired login", { status: 410, body: { error: { message: "This sign-in expired" } } }, /expired/],
  ])("reports %s", async (_name, answer, message) => {
    const { outcome } = await run(STARTED, [answer]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.message).toMatch(message);
  });

  it("reports an API that cannot start a login, and shows nothing", async () => {
    const { outcome, shown } = await run({ status: 503, body: { error: { message: "no login worker" } } }, []);
    expect(outcome).toEqual({ ok: false, message: "no login worker" });
    expect(shown).toEqual([]);
  });

  it("reports an unreachable API", async () => {
    const { outcome } = await run(new Error("ECONNREFUSED"), []);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.message).toMatch(/Cannot reach the platform API at https:\/\/api.test/);
  });
});

describe("machineName", () => {
  it.each([
    ["ada-laptop.local", "ada-laptop.local"],
    ["Ada's Mac", "Ada-s-Mac"],
    ["x".repeat(80), "x".repeat(64)],
  ])("%s → %s", (input, expected) => expect(machineName(input)).toBe(expected));
});
