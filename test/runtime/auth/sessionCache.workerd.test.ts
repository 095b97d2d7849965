import { describe, expect, it } from "vitest";
import { SESSION_RECHECK_MS, SessionCache } from "#src/runtime/auth/sessionCache.ts";

const T0 = 1_000_000;

/** A platform that answers `active` for every session, counting questions; `hold` keeps them pending. */
function platform(active = true) {
  const state = {
    asked: 0,
    active,
    pending: [] as (() => void)[],
    hold: false,
    ask: () => {
      state.asked++;
      const answer = state.active;
      if (!state.hold) return Promise.resolve(answer);
      return new Promise<boolean>((resolve) => state.pending.push(() => resolve(answer)));
    },
    release() {
      for (const resolve of state.pending.splice(0)) resolve();
    },
  };
  return state;
}

describe("SessionCache: one question per session per SESSION_RECHECK_MS", () => {
  it.each([
    { at: 0, asks: 1 },
    { at: SESSION_RECHECK_MS - 1, asks: 1 },
    { at: SESSION_RECHECK_MS, asks: 2 },
    { at: -1, asks: 2 },
  ])("a second look at T0 + $at ms asks $asks time(s) in all", async ({ at, asks }) => {
    const cache = new SessionCache();
    const p = platform();
    expect(await cache.isActive("7:s", "ada@example.com", T0, p.ask)).toBe(true);
    expect(await cache.isActive("7:s", "ada@example.com", T0 + at, p.ask)).toBe(true);
    expect(p.asked).toBe(asks);
  });

  it("a 'not active' answer is kept for the same time only", async () => {
    const cache = new SessionCache();
    const p = platform(false);
    expect(await cache.isActive("7:s", "ada@example.com", T0, p.ask)).toBe(false);
    p.active = true;
    expect(await cache.isActive("7:s", "ada@example.com", T0 + SESSION_RECHECK_MS - 1, p.ask)).toBe(false);
    expect(await cache.isActive("7:s", "ada@example.com", T0 + SESSION_RECHECK_MS, p.ask)).toBe(true);
  });

  it("concurrent first looks share one question", async () => {
    const cache = new SessionCache();
    const p = platform();
    p.hold = true;
    const looks = Array.from({ length: 10 }, () => cache.isActive("7:s", "ada@example.com", T0, p.ask));
    p.release();
    expect(await Promise.all(looks)).toEqual(Array(10).fill(true));
    expect(p.asked).toBe(1);
  });

  it("a failed question is not remembered, and the next look asks again", async () => {
    const cache = new SessionCache();
    let asked = 0;
    const failing = () => {
      asked++;
      return Promise.reject(new Error("down"));
    };
    await expect(cache.isActive("7:s", "ada@example.com", T0, failing)).rejects.toThrow("down");
    await expect(cache.isActive("7:s", "ada@example.com", T0, failing)).rejects.toThrow("down");
    expect(asked).toBe(2);
  });
});

describe("SessionCache: what this isolate ends reads as ended here at once", () => {
  it("end: the session is not active, without asking", async () => {
    const cache = new SessionCache();
    const p = platform();
    await cache.isActive("7:s", "ada@example.com", T0, p.ask);
    cache.end([{ key: "7:s", email: "ada@example.com" }], T0 + 1);
    expect(await cache.isActive("7:s", "ada@example.com", T0 + 2, p.ask)).toBe(false);
    expect(p.asked).toBe(1);
  });

  it("endUser: every session of that address known here (any case), and no one else's", async () => {
    const cache = new SessionCache();
    const p = platform();
    for (const [key, email] of [
      ["7:a", "Ada@Example.com"],
      ["7:b", "ada@example.com"],
      ["7:c", "bob@example.com"],
    ])
      await cache.isActive(key!, email!, T0, p.ask);
    cache.endUser("ADA@example.com", T0 + 1);
    const looks = await Promise.all(
      ["7:a", "7:b", "7:c"].map((key) => cache.isActive(key, "x@example.com", T0 + 2, p.ask)),
    );
    expect(looks).toEqual([false, false, true]);
    expect(p.asked).toBe(3);
  });

  it("an answer that arrives after this isolate ended the session does not bring it back", async () => {
    const cache = new SessionCache();
    const p = platform();
    p.hold = true;
    const look = cache.isActive("7:s", "ada@example.com", T0, p.ask);
    cache.end([{ key: "7:s", email: "ada@example.com" }], T0);
    p.release();
    expect(await look).toBe(false);
    expect(await cache.isActive("7:s", "ada@example.com", T0 + 1, p.ask)).toBe(false);
  });

  it("nor after this isolate signed the user out everywhere", async () => {
    const cache = new SessionCache();
    const p = platform();
    p.hold = true;
    const look = cache.isActive("7:s", "ada@example.com", T0, p.ask);
    cache.endUser("ada@example.com", T0);
    p.release();
    expect(await look).toBe(false);
    expect(await cache.isActive("7:s", "ada@example.com", T0 + 1, p.ask)).toBe(false);
  });

  it("remembers at most maxEntries sessions; the oldest answer goes first", async () => {
    const cache = new SessionCache(2);
    const p = platform();
    for (const key of ["7:a", "7:b", "7:c"]) await cache.isActive(key, "ada@example.com", T0, p.ask);
    expect(p.asked).toBe(3);
    await cache.isActive("7:c", "ada@example.com", T0, p.ask);
    await cache.isActive("7:b", "ada@example.com", T0, p.ask);
    expect(p.asked).toBe(3);
    await cache.isActive("7:a", "ada@example.com", T0, p.ask);
    expect(p.asked).toBe(4);
  });
});
