import { describe, expect, it } from "vitest";
import {
  defineWorkflow,
  isNamedNonRetryable,
  stepPolicy,
  WORKFLOW_DEFAULTS,
  WORKFLOW_LIMITS,
  type WorkflowOptions,
} from "#src/engine/api/definition.ts";
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
      nonRetryableErrors: 100,
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

describe("defineWorkflow: retry rules per error and per step", () => {
  const charge = { start: async () => ({ step: "charge" }), charge: async () => ({ done: true as const }) };

  it("takes each step's options over the workflow's, whole", () => {
    const definition = defineWorkflow("pay", charge, {
      maxAttempts: 2,
      backoff: { initialMS: 10 },
      stepOptions: { charge: { maxAttempts: 5, backoff: { factor: 3 } } },
    });
    expect(stepPolicy(definition, "start")).toMatchObject({ maxAttempts: 2, stepTimeoutMS: 30_000 });
    expect(stepPolicy(definition, "charge")).toEqual({
      maxAttempts: 5,
      backoff: { initialMS: 10, factor: 3, maxMS: 60_000, jitter: 0.2 },
      stepTimeoutMS: 30_000,
    });
  });

  it("an old step name reads its new name's options", () => {
    const definition = defineWorkflow("pay", charge, {
      stepOptions: { charge: { maxAttempts: 7 } },
      renamed: { bill: "charge" },
    });
    expect(stepPolicy(definition, "bill").maxAttempts).toBe(7);
  });

  it("rollback handlers by step, with their own policy over the workflow's", () => {
    const refund = async () => {};
    const definition = defineWorkflow("pay", charge, {
      maxAttempts: 2,
      rollback: { charge: refund },
      rollbackOptions: { maxAttempts: 6 },
    });
    expect(definition.rollback).toEqual({ charge: refund });
    expect(definition.rollbackPolicy.maxAttempts).toBe(6);
    expect(definition.rollbackPolicy.stepTimeoutMS).toBe(definition.stepTimeoutMS);
    expect(defineWorkflow("pay", charge, { maxAttempts: 4 }).rollbackPolicy.maxAttempts).toBe(4);
  });

  it("names the errors that fail a run at once", () => {
    const definition = defineWorkflow("pay", charge, { nonRetryableErrors: ["CardDeclinedError"] });
    class CardDeclinedError extends Error {
      override name = "CardDeclinedError";
    }
    expect(isNamedNonRetryable(definition, new CardDeclinedError("no"))).toBe(true);
    expect(isNamedNonRetryable(definition, new Error("CardDeclinedError"))).toBe(false);
    expect(isNamedNonRetryable(definition, { name: "CardDeclinedError" })).toBe(false);
  });
});

describe("defineWorkflow: a key it does not know is refused with a did-you-mean, not dropped", () => {
  const charge = { start: async () => ({ step: "charge" }), charge: async () => ({ done: true as const }) };
  const refused: [string, unknown, string][] = [
    [
      "a misspelt option",
      { maxAttempt: 3 },
      'workflow("pay") options has no "maxAttempt" (did you mean "maxAttempts"?); it takes schedule, maxAttempts, backoff, stepTimeoutMS, stepOptions, nonRetryableErrors, renamed, retentionMS, concurrency, throttle, debounce, rollback, rollbackOptions, rollbackOnCancel',
    ],
    [
      "a misspelt rollback",
      { rollbak: {} },
      'workflow("pay") options has no "rollbak" (did you mean "rollback"?); it takes schedule, maxAttempts, backoff, stepTimeoutMS, stepOptions, nonRetryableErrors, renamed, retentionMS, concurrency, throttle, debounce, rollback, rollbackOptions, rollbackOnCancel',
    ],
    [
      "a misspelt backoff key",
      { backoff: { initalMS: 5 } },
      'workflow("pay") backoff has no "initalMS" (did you mean "initialMS"?); it takes initialMS, factor, maxMS, jitter',
    ],
    [
      "a misspelt concurrency key",
      { concurrency: { limt: 2 } },
      'workflow("pay") concurrency has no "limt" (did you mean "limit"?); it takes limit, key, fairness',
    ],
    [
      "stepOptions for a step it does not have",
      { stepOptions: { chrage: { maxAttempts: 5 } } },
      'workflow("pay") stepOptions has no "chrage" (did you mean "charge"?); it takes start, charge',
    ],
    [
      "a misspelt step option",
      { stepOptions: { charge: { maxAttemps: 5 } } },
      'workflow("pay") stepOptions.charge has no "maxAttemps" (did you mean "maxAttempts"?); it takes maxAttempts, backoff, stepTimeoutMS',
    ],
    [
      "a step option out of bounds",
      { stepOptions: { charge: { maxAttempts: 101 } } },
      'workflow("pay") stepOptions.charge maxAttempts must be an integer from 1 to 100 (attempts include the first), got 101',
    ],
    [
      "stepOptions that are not an object",
      { stepOptions: ["charge"] },
      'workflow("pay") stepOptions must be an object like { charge: { maxAttempts: 5 } }',
    ],
    [
      "an error class where its name belongs",
      { nonRetryableErrors: [CardError] },
      'workflow("pay") nonRetryableErrors takes error names, not classes: write "CardError"',
    ],
    [
      "an empty error name",
      { nonRetryableErrors: [""] },
      'workflow("pay") nonRetryableErrors: "" is not an error name such as "CardDeclinedError"',
    ],
    [
      "a rollback for a step it does not have",
      { rollback: { chrage: async () => {} } },
      'workflow("pay") rollback has no "chrage" (did you mean "charge"?); it takes start, charge',
    ],
    [
      "a rollback that is not a function",
      { rollback: { charge: "refund" } },
      'workflow("pay") rollback.charge must be a function that undoes step "charge"',
    ],
    [
      "rollback as an array",
      { rollback: [async () => {}] },
      'workflow("pay") rollback must be an object like { charge: async (ctx) => { /* refund */ } }',
    ],
    [
      "rollbackOnCancel that is not a boolean",
      { rollbackOnCancel: "yes" },
      'workflow("pay") rollbackOnCancel must be true or false',
    ],
    [
      "a misspelt rollback option",
      { rollbackOptions: { maxAttemps: 5 } },
      'workflow("pay") rollbackOptions has no "maxAttemps" (did you mean "maxAttempts"?); it takes maxAttempts, backoff, stepTimeoutMS',
    ],
    [
      "a rollback option out of bounds",
      { rollbackOptions: { stepTimeoutMS: 0 } },
      'workflow("pay") rollbackOptions stepTimeoutMS must be a positive number of milliseconds, got 0',
    ],
    [
      "nonRetryableErrors as one string",
      { nonRetryableErrors: "CardDeclinedError" },
      'workflow("pay") nonRetryableErrors must be an array of at most 100 error names',
    ],
  ];
  it.each(refused)("refuses %s", (_, options, message) => {
    const error = thrown(() => defineWorkflow("pay", charge, options as WorkflowOptions));
    expect(error.code).toBe("invalid_input");
    expect(error.message).toBe(message);
  });
});

class CardError extends Error {}
