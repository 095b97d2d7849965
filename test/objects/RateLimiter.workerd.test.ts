import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "#src/objects/RateLimiter.ts";
import { takeRateLimit } from "#src/plugins/kit/rateLimit.ts";
import { PlatformError } from "#src/core/errors.ts";

const limiter = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));

describe("RateLimiter actor", () => {
  it("allows exactly `limit` of 100 concurrent takes and tells the rest when to retry", async () => {
    const stub = limiter("concurrent");
    const decisions = await Promise.all(Array.from({ length: 100 }, () => stub.take("actions", 3, 60_000)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(3);
    for (const d of decisions.filter((d) => !d.allowed)) {
      expect(d.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(d.retryAfterSeconds).toBeLessThanOrEqual(60);
    }
  });

  it("slides the window: a take leaves it windowMS after it happened", async () => {
    await runInDurableObject(limiter("sliding"), (instance: RateLimiter) => {
      const t0 = 1_000_000;
      expect(instance.takeAll([{ bucket: "b", limit: 2, windowMS: 10_000 }], t0).allowed).toBe(true);
      expect(instance.takeAll([{ bucket: "b", limit: 2, windowMS: 10_000 }], t0 + 4_000).allowed).toBe(true);
      expect(instance.takeAll([{ bucket: "b", limit: 2, windowMS: 10_000 }], t0 + 5_000)).toEqual({
        allowed: false,
        retryAfterSeconds: 5,
        bucket: "b",
      });
      expect(instance.takeAll([{ bucket: "b", limit: 2, windowMS: 10_000 }], t0 + 10_000).allowed).toBe(true);
      expect(instance.takeAll([{ bucket: "b", limit: 2, windowMS: 10_000 }], t0 + 10_001).allowed).toBe(false);
    });
  });

  it("takes from all buckets or none", async () => {
    await runInDurableObject(limiter("all-or-none"), (instance: RateLimiter) => {
      const now = 5_000_000;
      const both = [
        { bucket: "actions", limit: 3, windowMS: 60_000 },
        { bucket: "email", limit: 1, windowMS: 60_000 },
      ];
      expect(instance.takeAll(both, now).allowed).toBe(true);
      const refused = instance.takeAll(both, now + 1);
      expect(refused).toMatchObject({ allowed: false, bucket: "email" });
      // The refused call took nothing from `actions`: two more actions still fit.
      expect(instance.takeAll([both[0]!], now + 2).allowed).toBe(true);
      expect(instance.takeAll([both[0]!], now + 3).allowed).toBe(true);
      expect(instance.takeAll([both[0]!], now + 4).allowed).toBe(false);
    });
  });

  it("keeps buckets and projects apart", async () => {
    const a = limiter("project:a");
    const b = limiter("project:b");
    for (let i = 0; i < 3; i++) expect((await a.take("actions", 3, 60_000)).allowed).toBe(true);
    expect((await a.take("actions", 3, 60_000)).allowed).toBe(false);
    expect((await a.take("other", 3, 60_000)).allowed).toBe(true);
    expect((await b.take("actions", 3, 60_000)).allowed).toBe(true);
  });
});

describe('RateLimiter pauses (a provider\'s "wait" for a shared budget)', () => {
  const budget = [{ bucket: "bot", limit: 2, windowMS: 1_000 }];
  const t0 = 7_000_000;
  it.each([
    { when: "before any pause", pauses: [], at: t0, allowed: true, retryAfterSeconds: 0 },
    { when: "inside a pause", pauses: [t0 + 7_000], at: t0 + 1_000, allowed: false, retryAfterSeconds: 6 },
    { when: "under a second of it left", pauses: [t0 + 7_000], at: t0 + 6_900, allowed: false, retryAfterSeconds: 1 },
    { when: "when it ends", pauses: [t0 + 7_000], at: t0 + 7_000, allowed: true, retryAfterSeconds: 0 },
    {
      when: "a shorter pause after a longer one",
      pauses: [t0 + 9_000, t0 + 2_000],
      at: t0 + 5_000,
      allowed: false,
      retryAfterSeconds: 4,
    },
    {
      when: "a longer pause after a shorter one",
      pauses: [t0 + 2_000, t0 + 9_000],
      at: t0 + 5_000,
      allowed: false,
      retryAfterSeconds: 4,
    },
  ])(
    "$when: allowed $allowed, retry after $retryAfterSeconds s",
    async ({ pauses, at, allowed, retryAfterSeconds }) => {
      await runInDurableObject(limiter("paused-budget"), (instance: RateLimiter) => {
        for (const until of pauses) instance.pause("provider", until);
        expect(instance.takeAllUnlessPaused("provider", budget, at)).toEqual(
          allowed ? { allowed, retryAfterSeconds } : { allowed, retryAfterSeconds, bucket: "provider" },
        );
      });
    },
  );

  it("takes nothing while paused, and the budget still holds after it", async () => {
    await runInDurableObject(limiter("paused-takes"), (instance: RateLimiter) => {
      instance.pause("provider", t0 + 1_000);
      for (let i = 0; i < 5; i++) expect(instance.takeAllUnlessPaused("provider", budget, t0).allowed).toBe(false);
      expect(instance.takeAllUnlessPaused("provider", budget, t0 + 1_000).allowed).toBe(true);
      expect(instance.takeAllUnlessPaused("provider", budget, t0 + 1_000).allowed).toBe(true);
      expect(instance.takeAllUnlessPaused("provider", budget, t0 + 1_000)).toEqual({
        allowed: false,
        retryAfterSeconds: 1,
        bucket: "bot",
      });
    });
  });
});

describe("takeRateLimit", () => {
  it("throws rate_limited with retryAfterSeconds after 3 actions; a private project skips only the actions bucket", async () => {
    const publicProject = { id: 901, private: 0, owner_id: 9901 };
    for (let i = 0; i < 3; i++) await takeRateLimit(env, publicProject, ["actions"]);
    const error = await takeRateLimit(env, publicProject, ["actions"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlatformError);
    expect((error as PlatformError).code).toBe("rate_limited");
    expect((error as PlatformError).details?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect((error as PlatformError).message).toMatch(/3 plugin actions per 60 seconds/);

    const privateProject = { id: 902, private: 1, owner_id: 9902 };
    for (let i = 0; i < 20; i++) await takeRateLimit(env, privateProject, ["actions"]);
    for (let i = 0; i < 3; i++) await takeRateLimit(env, privateProject, ["actions", "email"]);
    const email = await takeRateLimit(env, privateProject, ["actions", "email"]).catch((e: unknown) => e);
    expect((email as PlatformError).code).toBe("rate_limited");
    expect((email as PlatformError).message).toMatch(/3 email sends per 60 seconds/);
  });

  it("the chat-server bot share (5 per second) binds private projects too, at the clock it is given", async () => {
    const privateProject = { id: 903, private: 1, owner_id: 9903 };
    const now = 9_000_000;
    for (let i = 0; i < 5; i++) await takeRateLimit(env, privateProject, ["chatServerBot"], now);
    const error = await takeRateLimit(env, privateProject, ["chatServerBot"], now + 999).catch((e: unknown) => e);
    expect((error as PlatformError).code).toBe("rate_limited");
    expect((error as PlatformError).details).toEqual({
      retryAfterSeconds: 1,
      bucket: "chatServerBot",
      scope: "project",
    });
    expect((error as PlatformError).message).toMatch(/5 chat-server bot calls per second/);
    await takeRateLimit(env, privateProject, ["chatServerBot"], now + 1_000);
  });
});
