import { describe, expect, it } from "vitest";
import { PLUGIN_IDS } from "#src/contracts/pluginRegistry.ts";
import { callApi, createUserWithToken, expectError } from "#test/support/workerd/index.ts";

describe("GET /plugins", () => {
  it("describes every plugin of the registry, as the console offers them", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("GET", "/plugins", { token: user.token });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const { plugins } = (await response.json()) as { plugins: { id: string }[] };
    expect(plugins.map((plugin) => plugin.id)).toEqual(PLUGIN_IDS);
    expect(plugins).toEqual(
      expect.arrayContaining([
        {
          id: "chatserver",
          title: "chat-server",
          resourceType: "server",
          uninstalls: true,
          instead: null,
          triggerKinds: ["command", "message", "reaction", "component", "modal"],
          commandKind: "command",
          triggerParameters: {
            component: [
              { name: "customId", required: true },
              { name: "values", required: false },
            ],
            modal: [
              { name: "customId", required: true },
              { name: "fields", required: false },
            ],
          },
        },
        {
          id: "workspace",
          title: "workspace-chat",
          resourceType: "workspace",
          uninstalls: true,
          instead: null,
          triggerKinds: ["message", "mention", "reaction", "action", "view"],
          commandKind: null,
          triggerParameters: {
            action: [
              { name: "actionId", required: true },
              { name: "value", required: false },
            ],
            view: [
              { name: "callbackId", required: true },
              { name: "fields", required: false },
            ],
          },
        },
        {
          id: "email-send",
          title: "email-send",
          resourceType: null,
          uninstalls: false,
          instead: expect.stringMatching(/^call email\.send\(\) from your project/),
          triggerKinds: [],
          commandKind: null,
          triggerParameters: {},
        },
      ]),
    );
  });

  it("needs a CLI token", async () => {
    await expectError(await callApi("GET", "/plugins"), 401, "unauthorized");
  });
});
