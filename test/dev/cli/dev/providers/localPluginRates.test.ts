import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  LOCAL_PLUGINS,
  loadOrCreatePluginSecrets,
  localPluginOverrides,
} from "#src/dev/cli/dev/providers/localPlugins.ts";

const stateDir = mkdtempSync(path.join(tmpdir(), "platform-plugin-rates-"));
afterAll(() => rmSync(stateDir, { recursive: true, force: true }));

const ports = {
  api: 1,
  login: 2,
  traces: 3,
  plugins: Object.fromEntries(Object.values(LOCAL_PLUGINS).map((plugin, i) => [plugin.worker, 10 + i])),
  fakes: {},
};

describe("the plugins' proxy rate under platform dev", () => {
  it.each([
    ["platform dev: every local project is a private deployment", true, "1"],
    ["platform dev --public (and platform up): the deployed public rate", false, undefined],
  ])("%s", (_case, localProjectsPrivate, expected) => {
    const overrides = localPluginOverrides({
      host: "127.0.0.1",
      ports,
      secrets: loadOrCreatePluginSecrets(stateDir),
      localProjectsPrivate,
    });
    for (const plugin of Object.values(LOCAL_PLUGINS))
      expect(overrides[plugin.worker]?.vars?.LOCAL_PROJECTS_PRIVATE, plugin.worker).toBe(expected);
  });
});
