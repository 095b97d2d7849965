import { describe, expect, it } from "vitest";
import { jitterUnit, retryAt, retryDelayMS } from "#src/engine/execution/backoff.ts";
import { WORKFLOW_DEFAULTS } from "#src/engine/api/definition.ts";

const key = { runId: "run-1", step: "charge", attempt: 1 };

describe("retryDelayMS", () => {
  it("grows exponentially without jitter", () => {
    const backoff = { initialMS: 100, factor: 3, maxMS: 1_000_000, jitter: 0 };
    expect([1, 2, 3, 4].map((attempt) => retryDelayMS(backoff, { ...key, attempt }))).toEqual([100, 300, 900, 2700]);
  });

  it("never exceeds maxMS, jitter included", () => {
    const backoff = { initialMS: 1000, factor: 2, maxMS: 5000, jitter: 0.5 };
    for (let attempt = 1; attempt <= 30; attempt++) {
      for (let run = 0; run < 20; run++) {
        expect(retryDelayMS(backoff, { runId: `r${run}`, step: "s", attempt })).toBeLessThanOrEqual(5000);
      }
    }
    // Far past the cap the delay sits in [maxMS*(1-jitter), maxMS].
    expect(retryDelayMS(backoff, { ...key, attempt: 50 })).toBeGreaterThanOrEqual(2500);
  });

  it("keeps jitter within ±jitter of the exponential delay", () => {
    const backoff = { initialMS: 1000, factor: 2, maxMS: 1_000_000, jitter: 0.2 };
    const delays = Array.from({ length: 500 }, (_, i) =>
      retryDelayMS(backoff, { runId: `run-${i}`, step: "s", attempt: 3 }),
    );
    for (const delay of delays) {
      expect(delay).toBeGreaterThanOrEqual(3200);
      expect(delay).toBeLessThanOrEqual(4800);
    }
    // Jitter actually spreads retries: both halves of the range are used.
    expect(delays.some((d) => d < 3800)).toBe(true);
    expect(delays.some((d) => d > 4200)).toBe(true);
  });

  it("is deterministic in (runId, step, attempt) and differs when any of them changes", () => {
    const backoff = WORKFLOW_DEFAULTS.backoff;
    expect(retryDelayMS(backoff, key)).toBe(retryDelayMS(backoff, { ...key }));
    const units = new Set([
      jitterUnit(key),
      jitterUnit({ ...key, runId: "run-2" }),
      jitterUnit({ ...key, step: "ship" }),
      jitterUnit({ ...key, attempt: 2 }),
    ]);
    expect(units.size).toBe(4);
    for (const unit of units) {
      expect(unit).toBeGreaterThanOrEqual(0);
      expect(unit).toBeLessThan(1);
    }
  });

  it("uses the documented defaults: 1 s first delay ±20 %", () => {
    expect(WORKFLOW_DEFAULTS).toMatchObject({ maxAttempts: 3, stepTimeoutMS: 30_000, stepLoopBudgetMS: 50_000 });
    expect(WORKFLOW_DEFAULTS.backoff).toEqual({ initialMS: 1000, factor: 2, maxMS: 60_000, jitter: 0.2 });
    const delay = retryDelayMS(WORKFLOW_DEFAULTS.backoff, key);
    expect(delay).toBeGreaterThanOrEqual(800);
    expect(delay).toBeLessThanOrEqual(1200);
  });

  it("retryAt recomputes the retry time from the step_failed event alone", () => {
    const backoff = { initialMS: 500, factor: 2, maxMS: 10_000, jitter: 0.3 };
    const failed = {
      runId: "run-9",
      workflowId: "w",
      seq: 3,
      type: "step_failed" as const,
      payload: { step: "charge", attempt: 2, reason: "boom", retryable: true },
      at: 10_000,
    };
    expect(retryAt(failed, backoff)).toBe(
      10_000 + retryDelayMS(backoff, { runId: "run-9", step: "charge", attempt: 2 }),
    );
  });
});
