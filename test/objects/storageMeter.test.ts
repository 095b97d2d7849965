import { describe, expect, it } from "vitest";
import {
  meterActiveWork,
  meterRequest,
  meteringRequests,
  meterWorkerInvocation,
  readStorageMeter,
  resetStorageMeter,
} from "#src/objects/storageMeter.ts";

// Requests and active time are counted only once a reset asked for them (production never does); the
// time is read on the clock the reset was given.
describe("storageMeter: requests and active time", () => {
  it("counts nothing before the first reset, then each call, the worker's entries and each actor's active time", async () => {
    expect(meteringRequests()).toBe(false);
    expect(await meterRequest("actor-a", async () => "answer")).toBe("answer");
    expect(readStorageMeter()).toMatchObject({ rpcCalls: 0, activeMS: 0 });

    let now = 1_000;
    resetStorageMeter(() => now);
    expect(meteringRequests()).toBe(true);
    let answer = (_value: string) => {};
    const slow = meterRequest("actor-a", () => new Promise<string>((resolve) => (answer = resolve)));
    now = 1_010;
    await meterRequest("actor-a", async () => "overlapping");
    await expect(
      meterRequest("actor-b", async () => {
        now = 1_015;
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    let finish = () => {};
    meterActiveWork("actor-b", new Promise<void>((resolve) => (finish = resolve)));
    now = 1_030;
    answer("slow");
    expect(await slow).toBe("slow");
    now = 1_040;
    finish();
    await Promise.resolve();
    meterWorkerInvocation();
    now = 1_100;
    // actor-a: 1,000 → 1,030 (the two calls overlap); actor-b: the refused call (1,010 → 1,015) and the
    // work it went on with (1,015 → 1,040).
    expect(readStorageMeter()).toMatchObject({ rpcCalls: 3, workerInvocations: 1, activeMS: 30 + 5 + 25 });
  });
});
