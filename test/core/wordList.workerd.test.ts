import { describe, expect, it } from "vitest";
import { andList, orList } from "#src/core/wordList.ts";

// Run in workerd, where the API worker says its choices; Node's ICU (the CLI) formats them the same way.
describe("word lists", () => {
  it.each([
    [[], "", ""],
    [["chatserver"], "chatserver", "chatserver"],
    [["chatserver", "workspace"], "chatserver or workspace", "chatserver and workspace"],
    [
      ["chatserver", "workspace", "email-send"],
      "chatserver, workspace or email-send",
      "chatserver, workspace and email-send",
    ],
  ])("%j → %j / %j", (words, or, and) => {
    expect(orList(words)).toBe(or);
    expect(andList(words)).toBe(and);
  });
});
