/**
 * The run index's give-backs (src/objects/liveRunReleases.ts), on node:sqlite: a give-back the
 * platform does not take is kept and tried again with the next report, then forgotten.
 */
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it, vi } from "vitest";
import { createLiveRunReleases } from "#src/objects/liveRunReleases.ts";
import type { LiveRunSlots } from "#src/objects/liveRunSlots.ts";
import { nodeSyncSql } from "#src/runtime/node/nodeSyncSql.ts";

function platform() {
  let down = false;
  const calls: string[][] = [];
  const slots: LiveRunSlots = {
    hold: async () => [],
    release: async (runIds) => {
      calls.push([...runIds]);
      if (down) throw new Error("the platform did not answer");
    },
  };
  return { slots, calls, setDown: (value: boolean) => (down = value) };
}

describe("live-run releases", () => {
  it("gives back the ended runs at once, and makes no table while nothing fails", async () => {
    const db = new DatabaseSync(":memory:");
    const releases = createLiveRunReleases(nodeSyncSql(db));
    const { slots, calls } = platform();
    await releases.release(slots, ["a", "b"]);
    await releases.release(slots, []);
    expect(calls).toEqual([["a", "b"]]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'live_run_releases'").all()).toEqual([]);
  });

  it("keeps what the platform did not take, gives it back with the next report, then forgets it", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const releases = createLiveRunReleases(nodeSyncSql(new DatabaseSync(":memory:")));
    const { slots, calls, setDown } = platform();
    setDown(true);
    await releases.release(slots, ["a", "b"]);
    await releases.release(slots, ["c"]);
    expect(errors).toHaveBeenCalledTimes(2);
    setDown(false);
    await releases.release(slots, ["d"]);
    await releases.release(slots, []);
    expect(calls).toEqual([["a", "b"], ["a", "b"], ["a", "b", "c"], ["d"]]);
    errors.mockRestore();
  });
});
