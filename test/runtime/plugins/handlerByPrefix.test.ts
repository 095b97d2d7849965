import { describe, expect, it } from "vitest";
import { handlerByPrefix, requireHandlerByPrefix } from "#src/runtime/plugins/handlerByPrefix.ts";
import { NoPluginHandler } from "#src/runtime/plugins/noPluginHandler.ts";

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

describe("an interaction no handler takes", () => {
  it("is NoPluginHandler (404 not_found) naming the call that registers one, holding the registered ids", () => {
    const handlers = new Map([["approve", "approve"]]);
    expect(requireHandlerByPrefix(handlers, "approve:run-42", "onAction")).toBe("approve");
    const error = (() => {
      try {
        requireHandlerByPrefix(handlers, "reject:run-42", "onAction");
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(NoPluginHandler);
    expect(error).toMatchObject({
      code: "not_found",
      message: 'This project has no onAction handler for "reject:run-42".',
      registered: ["approve"],
    });
    // The ids stay in the process: the delivery's answer says only what was missing.
    expect((error as NoPluginHandler).toJSON()).toEqual({
      code: "not_found",
      message: 'This project has no onAction handler for "reject:run-42".',
    });
  });
});
