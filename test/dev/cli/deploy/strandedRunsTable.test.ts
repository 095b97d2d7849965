import { describe, expect, it } from "vitest";
import { strandedRunsTable } from "#src/dev/cli/deploy/strandedRunsTable.ts";

const RUN_ID = `${"a".repeat(64)}.b8lf1wyit528`;

describe("the refused push's table of stranded runs", () => {
  it("lines its header up with rows whose run ids are real ones (<64 hex>.<12>)", () => {
    const lines = strandedRunsTable({
      count: 3,
      runs: [
        { runId: RUN_ID, workflow: "order", step: "approve", status: "waiting", missing: "step" },
        { runId: "r2", workflow: "fulfilment", step: "pack", status: "paused", missing: "workflow" },
      ],
    });
    expect(lines).toEqual([
      `  run${" ".repeat(RUN_ID.length - 3)}  workflow    step`,
      `  ${RUN_ID}  order       approve  (step "approve" is gone)`,
      `  r2${" ".repeat(RUN_ID.length - 2)}  fulfilment  pack     (workflow "fulfilment" is gone)`,
      "  … and 1 more",
    ]);
    // Each column starts at the same offset in the header and in every row.
    const starts = (line: string) => [line.indexOf("workflow"), line.indexOf("step")];
    expect(lines[1]!.indexOf("order")).toBe(starts(lines[0]!)[0]);
    expect(lines[1]!.indexOf("approve")).toBe(starts(lines[0]!)[1]);
  });
});
