import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimEvent, EVENT_DEDUPE_TTL_MS, releaseEvent } from "#src/workers/db/eventDedupe.ts";

describe("eventDedupe", () => {
  it("delivers a retried event once; a released claim lets the retry through; old claims are purged", async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => claimEvent(env.DB, "workspace", "Ev1")));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await claimEvent(env.DB, "chatserver", "Ev1")).toBe(true);
    await releaseEvent(env.DB, "workspace", "Ev1");
    expect(await claimEvent(env.DB, "workspace", "Ev1")).toBe(true);
    expect(await claimEvent(env.DB, "workspace", "Ev1", Date.now() + EVENT_DEDUPE_TTL_MS + 1000)).toBe(true);
  });
});
