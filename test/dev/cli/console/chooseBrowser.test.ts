import { describe, expect, it } from "vitest";
import { chooseBrowser } from "#src/dev/cli/console/chooseBrowser.ts";

describe("which browser `platform console` opens", () => {
  it.each<[string, boolean, string | undefined, NodeJS.Platform, boolean, ReturnType<typeof chooseBrowser>]>([
    ["--no-open", true, "firefox", "linux", true, { command: null, reason: "--no-open" }],
    ["BROWSER=none", false, "none", "linux", true, { command: null, reason: "BROWSER=none" }],
    ["$BROWSER", false, "firefox", "linux", true, { command: "firefox", args: [] }],
    ["$BROWSER with arguments", false, "firefox --new-tab", "linux", true, { command: "firefox", args: ["--new-tab"] }],
    ["the first of a $BROWSER list", false, "w3m:lynx", "linux", true, { command: "w3m", args: [] }],
    ["xdg-open", false, undefined, "linux", true, { command: "xdg-open", args: [] }],
    ["an empty $BROWSER", false, "", "linux", true, { command: "xdg-open", args: [] }],
    ["open on macOS", false, undefined, "darwin", false, { command: "open", args: [] }],
    [
      "nothing to open with",
      false,
      undefined,
      "linux",
      false,
      { command: null, reason: "no $BROWSER and no xdg-open on PATH" },
    ],
  ])("%s", (_name, noOpen, browserEnv, platform, xdgOpen, choice) => {
    expect(chooseBrowser({ noOpen, browserEnv, platform, onPath: () => xdgOpen })).toEqual(choice);
  });
});
