import { describe, expect, it } from "vitest";
import { viewLines } from "#src/console/public/console/logsView.js";
import { printableLine } from "#src/console/public/console/printableLine.js";

describe("printableLine: a logged line cannot drive the reader's terminal or the console", () => {
  it.each([
    ["a window title (OSC 0)", "hi \u001b]0;pwned\u0007 there", "hi \\x1b]0;pwned\\x07 there"],
    ["a screen clear (CSI 2J)", "\u001b[2J\u001b[H", "\\x1b[2J\\x1b[H"],
    ["an 8-bit CSI", "\u009b2J", "\\x9b2J"],
    ["a carriage return that would overwrite the line", "ok\rFAKE", "ok\\x0dFAKE"],
    ["a backspace and DEL", "a\u0008b\u007f", "a\\x08b\\x7f"],
    [
      "plain text, tabs, newlines and accents as they are",
      "élan\tok\n  at src/index.ts:3",
      "élan\tok\n  at src/index.ts:3",
    ],
  ])("escapes %s", (_, logged, shown) => {
    expect(printableLine(logged)).toBe(shown);
  });
});

describe("the console's Logs view", () => {
  it("shows a logged escape sequence escaped, with the line's time", () => {
    const at = Date.UTC(2026, 10, 29, 1, 0, 0);
    expect(viewLines([{ at, text: "hi \u001b]0;pwned\u0007" }])).toEqual([
      `${new Date(at).toLocaleTimeString()} hi \\x1b]0;pwned\\x07\n`,
    ]);
  });
});
