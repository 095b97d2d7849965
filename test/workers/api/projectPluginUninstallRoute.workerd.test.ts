// DELETE /projects/:slug/plugins/:plugin: who may ask, and what it answers without a plugin worker.
// The whole path through the workspace plugin is in test/platform/plugins/workspace/index.workerd.test.ts.
import { describe, it } from "vitest";
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
});
