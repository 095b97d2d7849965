import { expect } from "vitest";

/** A completed `greet` run as a list of runs sums it up; its times are whatever the clock said. */
export const completedGreetSummary = (id: string) => ({
  id,
  workflowId: id,
  name: "greet",
  status: "completed",
  step: "finish",
  createdAt: expect.any(Number),
  updatedAt: expect.any(Number),
  expiresAt: expect.any(Number),
});
