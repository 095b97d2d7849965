import { afterEach, describe, expect, it } from "vitest";
import { createScratchpad, createStepAttempt, setStepEnvSource } from "#src/engine/execution/stepContext.ts";

const attempt = () =>
  createStepAttempt({ scratchpad: createScratchpad(), step: "start", attempt: 1, runId: "r", workflowId: "w" });

afterEach(() => setStepEnvSource(() => ({})));

describe("ctx.env", () => {
  it("is empty until the host names a source", () => {
    expect(attempt().ctx.env).toEqual({});
  });

  it("is read from the host's source when the attempt starts", () => {
    let vars: Record<string, string> = { API_KEY: "first" };
    setStepEnvSource(() => vars);
    const before = attempt();
    vars = { API_KEY: "second" };
    expect(before.ctx.env).toEqual({ API_KEY: "first" });
    expect(attempt().ctx.env).toEqual({ API_KEY: "second" });
  });
});
