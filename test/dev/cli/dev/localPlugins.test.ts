import { describe, expect, it } from "vitest";
import { assignLocalPluginPorts } from "#src/dev/cli/dev/localPlugins.ts";

describe("assignLocalPluginPorts", () => {
  it("gives each plugin worker and fake provider its own port", () => {
    expect(assignLocalPluginPorts([9001, 9002, 9003, 9004, 9005, 9006])).toEqual({
      "plugin-chatserver": 9001,
      "plugin-workspace": 9002,
      "plugin-email": 9003,
      "fake-chatserver": 9004,
      "fake-workspace": 9005,
      "fake-email": 9006,
    });
  });

  it.each([[[9001, 9002]], [[9001, 9002, 9003, 9004, 9005, 9006, 9007]]])("refuses %j", (ports) => {
    expect(() => assignLocalPluginPorts(ports)).toThrow(/Expected 6 plugin ports/);
  });
});
