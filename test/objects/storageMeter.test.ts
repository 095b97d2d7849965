import { describe, expect, it } from "vitest";
import {
  meterActiveWork,
  meteringRequests,
  meterRpcCall,
  meterWorkerInvocation,
  readStorageMeter,
  resetStorageMeter,
} from "#src/objects/storageMeter.ts";

// Requests and active time are counted only once a reset asked for them (production never does); the
// time is read on the clock the reset was given.
describe("storageMeter: requests and active time", () => {
  it("times nothing before the first reset, then each actor's work (overlaps once) on the reset's clock", async () => {
    expect(meteringRequests()).toBe(false);
    meterActiveWork("actor-a", Promise.resolve());
    expect(readStorageMeter()).toMatchObject({ activeMS: 0 });

    let now = 1_000;
    resetStorageMeter(() => now);
    expect(meteringRequests()).toBe(true);
    let finishSlow = () => {};
    const slow = new Promise<void>((resolve) => (finishSlow = resolve));
    meterActiveWork("actor-a", slow);
    now = 1_010;
    const refused = Promise.reject(new Error("refused"));
    meterActiveWork("actor-b", refused);
    await refused.catch(() => {});
    meterActiveWork("actor-a", Promise.resolve());
    await Promise.resolve();
    now = 1_030;
    finishSlow();
    await slow;
    await Promise.resolve();
    meterRpcCall();
    meterRpcCall();
    meterWorkerInvocation();
    now = 1_100;
    // actor-a: 1,000 → 1,030 (its second piece of work overlaps the first); actor-b: settled at once, 0 ms.
    expect(readStorageMeter()).toMatchObject({ rpcCalls: 2, workerInvocations: 1, activeMS: 30 });
  });
});
