import { describe, expect, it } from "vitest";
import { printableLine } from "#src/dev/cli/logs/printableLine.ts";

describe("printableLine: a logged line cannot drive the reader's terminal", () => {
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
