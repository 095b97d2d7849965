import { describe, expect, it } from "vitest";
import { handlerByPrefix } from "#src/runtime/plugins/handlerByPrefix.ts";

describe("which handler an interaction's id reaches", () => {
  const handlers = new Map([
    ["approve", "approve"],
    ["approve:urgent", "approve:urgent"],
    ["env", "env"],
  ]);
  it.each([
    ["approve", "approve"],
    ["approve:run-42", "approve"],
    ["approve:urgent", "approve:urgent"],
    ["approve:urgent:run-42", "approve:urgent"],
    ["approved", undefined],
    ["approve-run-42", undefined],
    ["env:", "env"],
    ["reject:run-42", undefined],
  ])("%s → %s", (id, handler) => {
    expect(handlerByPrefix(handlers, id)).toBe(handler);
  });
});
