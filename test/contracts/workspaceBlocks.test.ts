// The platform's Block Kit check refuses what the provider would, before any call: a view past Slack's
// 250 kB reaches the project's own `workspace.openView` as 400 `invalid_input`, not the provider's
// `invalid_arguments` surfacing as 502. (The proxy's rows, through the plugin, are in
// test/plugins/workspace/index.interactivity.workerd.test.ts; its 64 KiB body cap answers 413 first.)
import { describe, expect, it } from "vitest";
import { requireView, WORKSPACE_BLOCK_LIMITS } from "../../src/contracts/workspaceBlocks.ts";
import { viewRefusal } from "../../src/dev/fakes/workspace/fakeBlockRules.ts";

const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });
const modal = (blocks: unknown[]) => ({ type: "modal", title: { type: "plain_text", text: "Why?" }, blocks });

describe("requireView against the provider's own rules", () => {
  it.each([
    ["just under the size limit", modal(Array.from({ length: 80 }, () => section("x".repeat(3000)))), null],
    [
      "over the size limit",
      modal(Array.from({ length: 90 }, () => section("x".repeat(2900)))),
      `view must be at most ${WORKSPACE_BLOCK_LIMITS.viewBytes} bytes of JSON.`,
    ],
  ])("%s: the platform and the fake agree", (_, view, message) => {
    const refused = viewRefusal(view);
    if (message === null) {
      expect(refused).toBeNull();
      expect(requireView(view)).toBe(view);
    } else {
      expect(refused?.error).toBe("invalid_arguments");
      expect(() => requireView(view)).toThrow(expect.objectContaining({ code: "invalid_input", message }));
    }
  });
});
