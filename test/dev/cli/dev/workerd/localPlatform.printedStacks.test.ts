import { afterEach, describe, expect, it, vi } from "vitest";
import { type LocalPlatformInput, localPlatformConfig } from "#src/dev/cli/dev/workerd/localPlatform.ts";
import {
  LOCAL_PLUGIN_IDS,
  type LocalPluginId,
  type LocalPluginSecrets,
} from "#src/dev/cli/dev/providers/localPlugins.ts";

// How `platform dev` prints a stack workerd logged (a plugin handler's error): the project's frames, and
// the platform's as `… N platform frames` unless --platform-frames; `platform up` prints it as logged.

const pluginSecrets: LocalPluginSecrets = {
  tokenEncryptionKey: "a".repeat(64),
  stateSecret: "s".repeat(64),
  chatserver: {
    applicationId: "1",
    clientId: "1",
    clientSecret: "c",
    botToken: "b",
    signingSeed: "0".repeat(64),
    publicKey: "p",
  },
  workspace: { clientId: "w", clientSecret: "c", signingSecret: "s" },
  email: { apiKey: "re_local" },
};

function input(stackFrames: LocalPlatformInput["stackFrames"]): LocalPlatformInput {
  return {
    host: "127.0.0.1",
    port: 9000,
    ports: {
      api: 9001,
      login: 9101,
      traces: 9102,
      plugins: {},
      fakes: Object.fromEntries(LOCAL_PLUGIN_IDS.map((id, i) => [id, 9020 + i])) as Record<LocalPluginId, number>,
    },
    stateDir: "/nonexistent/.platform",
    deployed: [],
    scripts: {
      workers: {},
      fakes: Object.fromEntries(LOCAL_PLUGIN_IDS.map((id) => [id, `/nonexistent/fake-${id}.js`])) as Record<
        LocalPluginId,
        string
      >,
    },
    adminToken: "admin",
    secretsKey: "5e".repeat(32),
    login: null,
    pluginSecrets,
    project: null,
    build: null,
    stackFrames,
  };
}

const logged = [
  "plugin chatserver handler failed: Error: handler broke",
  "    at src/index.ts:13:9",
  "    at handlePluginRoute (node_modules/platform/dist/runtime/plugins/pluginRoutes.js:70:5)",
  "    at Object.fetch (node_modules/platform/dist/runtime/entry/createPlatformWorker.js:98:12)",
].join("\n");

describe("a stack workerd logs, as the local platform prints it", () => {
  afterEach(() => vi.restoreAllMocks());

  it.each<[string, LocalPlatformInput["stackFrames"], string]>([
    [
      "platform dev: the project's frames, the platform's as one line",
      "project",
      "plugin chatserver handler failed: Error: handler broke\n    at src/index.ts:13:9\n    … 2 platform frames",
    ],
    ["platform dev --platform-frames: every frame", "all", logged],
    ["platform up: as logged", undefined, logged],
  ])("%s", (_label, stackFrames, printed) => {
    const error = vi.spyOn(console, "error").mockImplementation(() => {});
    const config = localPlatformConfig(input(stackFrames));
    config.handleStructuredLogs!({ level: "error", message: logged } as never);
    expect(error.mock.calls).toEqual([[printed]]);
  });
});
