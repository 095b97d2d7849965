// DELETE /projects/:slug/plugins/:plugin: who may ask, and what it answers without a plugin worker.
// The whole path through the workspace plugin is in test/plugins/workspace/index.uninstall.workerd.test.ts.
import { describe, expect, it } from "vitest";
import { PLUGINS, UNINSTALLABLE_PLUGINS } from "#src/contracts/pluginRegistry.ts";
import { andList } from "#src/core/wordList.ts";
import { apiHarness, callApi, expectError, userWithProject } from "#test/support/workerd/index.ts";

describe("DELETE /projects/:slug/plugins/:plugin", () => {
  it.each([
    ["no CLI token", undefined, "ada-app", "workspace", 401, "unauthorized"],
    ["a forged CLI token", "forged", "ada-app", "workspace", 401, "unauthorized"],
    ["a missing project", "ada", "nope", "workspace", 404, "not_found"],
    ["another user's project", "bob", "ada-app", "workspace", 404, "not_found"],
    ["a plugin with no install", "ada", "ada-app", "email-send", 404, "not_found"],
    ["an unknown plugin", "ada", "ada-app", "nope", 404, "not_found"],
    ["an unbound plugin worker", "ada", "ada-app", "chatserver", 503, "not_ready"],
  ])("%s → %i %s", async (_case, who, slug, plugin, status, code) => {
    const ada = await userWithProject("ada@example.com", "ada-app");
    const bob = await userWithProject("bob@example.com", "bob-app");
    const token = who === "ada" ? ada.user.token : who === "bob" ? bob.user.token : who;
    const harness = apiHarness({ env: { CHATSERVER_PLUGIN: undefined, WORKSPACE_PLUGIN: undefined } });
    const response = await callApi("DELETE", `/projects/${slug}/plugins/${plugin}`, { token, env: harness.env });
    await expectError(response, status as number, code as string);
  });

  const uninstallable = UNINSTALLABLE_PLUGINS.map(({ id }) => id);

  it.each(PLUGINS.filter(({ id }) => !(uninstallable as string[]).includes(id)).map(({ id }) => [id]))(
    "refuses %s, which has no install to let go, naming the plugins that do",
    async (plugin) => {
      const ada = await userWithProject("ada@example.com", "ada-app");
      const response = await callApi("DELETE", `/projects/ada-app/plugins/${plugin}`, { token: ada.user.token });
      const error = await expectError(response, 404, "not_found");
      expect(error.error.message).toBe(`Only ${andList(uninstallable)} can be uninstalled (got "${plugin}").`);
    },
  );

  it.each(UNINSTALLABLE_PLUGINS.map(({ id, binding }) => [id, binding]))(
    "answers not_ready for %s when the API worker has no %s binding",
    async (plugin, binding) => {
      const ada = await userWithProject("ada@example.com", "ada-app");
      const harness = apiHarness({ env: { [binding]: undefined } });
      const response = await callApi("DELETE", `/projects/ada-app/plugins/${plugin}`, {
        token: ada.user.token,
        env: harness.env,
      });
      const error = await expectError(response, 503, "not_ready");
      expect(error.error.message).toBe(`The ${plugin} plugin is not bound to the API worker (${binding}).`);
    },
  );
});
