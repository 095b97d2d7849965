import { describe, expect, it } from "vitest";
import { defineWorkflow, WORKFLOW_DEFAULTS, WORKFLOW_LIMITS, type WorkflowOptions } from "#src/engine/definition.ts";
import { thrown } from "#test/support/workflow/rejection.ts";

const steps = { start: async () => ({ done: true as const }) };

const refusal = (options: WorkflowOptions) => thrown(() => defineWorkflow("greet", steps, options));

describe("defineWorkflow: option caps (issue 11: no unbounded retries, sleeps or steps)", () => {
  it("documents the caps", () => {
    expect(WORKFLOW_LIMITS).toEqual({
      maxAttempts: 100,
      backoffMS: 86_400_000,
      stepTimeoutMS: 900_000,
      minRetentionMS: 1000,
      maxRetentionMS: 31_536_000_000,
      renamedSteps: 1000,
    });
  });

  it("accepts the defaults, with no options or with each default spelled out", () => {
    const { stepLoopBudgetMS: _, ...defaults } = WORKFLOW_DEFAULTS;
    for (const options of [undefined, {}, { ...defaults, backoff: { ...defaults.backoff } }]) {
      expect(defineWorkflow("greet", steps, options)).toMatchObject(defaults);
    }
  });

  const atCap: [string, WorkflowOptions][] = [
    ["maxAttempts", { maxAttempts: 100 }],
    ["stepTimeoutMS", { stepTimeoutMS: 900_000 }],
    ["backoff.maxMS", { backoff: { maxMS: 86_400_000 } }],
    ["backoff.initialMS = backoff.maxMS", { backoff: { initialMS: 86_400_000, maxMS: 86_400_000 } }],
    [
      "all at once",
      { maxAttempts: 100, stepTimeoutMS: 900_000, backoff: { initialMS: 86_400_000, maxMS: 86_400_000 } },
    ],
    // Above the 50 s step-loop budget but within the cap: a long step still runs (the budget only stops new claims).
    ["stepTimeoutMS past the step-loop budget", { stepTimeoutMS: WORKFLOW_DEFAULTS.stepLoopBudgetMS + 1 }],
  ];
  it.each(atCap)("accepts %s at its cap", (_, options) => {
    expect(() => defineWorkflow("greet", steps, options)).not.toThrow();
  });

  const pastCap: [string, WorkflowOptions, string][] = [
    [
      "maxAttempts",
      { maxAttempts: 101 },
      'workflow("greet") maxAttempts must be an integer from 1 to 100 (attempts include the first), got 101',
    ],
    [
      "stepTimeoutMS",
      { stepTimeoutMS: 900_001 },
      'workflow("greet") stepTimeoutMS must be at most 900000 (15 minutes), got 900001',
    ],
    [
      "stepTimeoutMS of an hour",
      { stepTimeoutMS: 3_600_000 },
      'workflow("greet") stepTimeoutMS must be at most 900000 (15 minutes), got 3600000',
    ],
    [
      "backoff.maxMS",
      { backoff: { maxMS: 86_400_001 } },
      'workflow("greet") backoff.maxMS must be at most 86400000 (24 hours), got 86400001',
    ],
    [
      "backoff.initialMS",
      { backoff: { initialMS: 86_400_001, maxMS: 86_400_001 } },
      'workflow("greet") backoff.initialMS must be at most 86400000 (24 hours), got 86400001',
    ],
    [
      "backoff.initialMS above backoff.maxMS",
      { backoff: { initialMS: 120_000 } },
      'workflow("greet") backoff.maxMS must be >= backoff.initialMS (120000), got 60000',
    ],
  ];
  it.each(pastCap)("refuses %s past its cap with invalid_input naming option, cap and value", (_, options, message) => {
    const error = refusal(options);
    expect(error.code).toBe("invalid_input");
    expect(error.message).toBe(message);
  });

  // The checks that were there before the caps keep their messages.
  const malformed: [WorkflowOptions, string][] = [
    [{ maxAttempts: 0 }, "maxAttempts must be an integer from 1 to 100 (attempts include the first), got 0"],
    [{ maxAttempts: 1.5 }, "maxAttempts must be an integer from 1 to 100 (attempts include the first), got 1.5"],
    [{ stepTimeoutMS: 0 }, "stepTimeoutMS must be a positive number of milliseconds, got 0"],
    [
      { stepTimeoutMS: Number.POSITIVE_INFINITY },
      "stepTimeoutMS must be a positive number of milliseconds, got Infinity",
    ],
    [{ backoff: { initialMS: -1 } }, "backoff.initialMS must be >= 0, got -1"],
    [{ backoff: { factor: 0.5 } }, "backoff.factor must be >= 1, got 0.5"],
    [{ backoff: { maxMS: Number.NaN } }, "backoff.maxMS must be >= backoff.initialMS (1000), got NaN"],
    [{ backoff: { jitter: 2 } }, "backoff.jitter must be between 0 and 1, got 2"],
  ];
  it.each(malformed)("still refuses malformed %o", (options, message) => {
    const error = refusal(options);
    expect(error.code).toBe("invalid_input");
    expect(error.message).toBe(`workflow("greet") ${message}`);
  });
});
