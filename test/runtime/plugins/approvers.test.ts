import { describe, expect, it } from "vitest";
import { approverRefusal, NOT_AN_APPROVER, runApprovers } from "#src/runtime/plugins/approvers.ts";

describe("approverRefusal", () => {
  it.each([
    ["an approver", "U1", ["U1", "U2"], null],
    ["a member who is not an approver", "U3", ["U1", "U2"], NOT_AN_APPROVER],
    ["anyone, when the list is empty", "U1", [], NOT_AN_APPROVER],
    ["a click with no user", undefined, ["U1"], NOT_AN_APPROVER],
    ["anyone, when approvers is not a list", "U1", "U1", NOT_AN_APPROVER],
    ["anyone, when the list holds a non-string", "U1", ["U1", 7], NOT_AN_APPROVER],
    ["an empty user id against a list with an empty id", "", [""], NOT_AN_APPROVER],
  ])("%s", (_name, user, approvers, refusal) => {
    expect(approverRefusal(user, approvers)).toBe(refusal);
  });
});

describe("runApprovers", () => {
  const run = (data: unknown) => ({
    events: [{ seq: 1, type: "workflow_created", at: 0, payload: { workflowName: "approval", writes: { data } } }],
  });
  it.each([
    ["the start data's approvers", { approvers: ["U1", "U2"] }, ["U1", "U2"]],
    ["none when the data names none", { what: "web" }, []],
    ["none when the data is not an object", null, []],
    ["only the string ids", { approvers: ["U1", 2, null] }, ["U1"]],
    ["none when approvers is not a list", { approvers: "U1" }, []],
  ])("%s", (_name, data, approvers) => {
    expect(runApprovers(run(data) as never)).toEqual(approvers);
  });
});
