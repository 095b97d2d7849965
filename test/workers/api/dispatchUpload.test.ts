import { describe, expect, it } from "vitest";
import { PLUGINS, pluginWorkerName } from "#src/contracts/pluginRegistry.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";
import {
  type DispatchUploadTarget,
  type ProjectScriptUpload,
  uploadProjectScript,
} from "#src/workers/api/dispatchUpload.ts";
import { STAND_IN_ACCOUNT, standInAccount } from "#test/support/cloudflare/standInAccount.ts";

const project = { id: 7, slug: "shop", script_name: "proj-shop", worker_secret: "s3cret" };
const BUNDLE =
  "export default { fetch() { return new Response('hi') } }; export class WorkflowRun {}; export class WorkflowRunIndex {}";
const CLASSES = ["WorkflowRun", "WorkflowRunIndex"];
/** A first upload with no classes; each test names what differs. */
const upload: ProjectScriptUpload = {
  project,
  bundle: BUNDLE,
  durableObjects: [],
  previous: { tag: null, classes: [] },
  compatibilityDate: "2026-10-30",
};

function cloudflare() {
  const { standIn, fetch } = standInAccount(startInWorkerd);
  const target: DispatchUploadTarget = {
    apiBase: "https://api.cloudflare.test/client/v4",
    ...STAND_IN_ACCOUNT,
    fetch,
  };
  return { standIn, target };
}

describe("uploadProjectScript, through the cloudflare SDK to the script-upload stand-in", () => {
  it("is accepted with every binding, its module and a migration for the new classes", async () => {
    const { standIn, target } = cloudflare();
    const { migrationTag } = await uploadProjectScript(target, {
      ...upload,
      durableObjects: CLASSES,
      loginUrl: "https://login.example.test",
    });
    const script = standIn.scripts().get("proj-shop")!;
    expect(script.migrationTag).toBe(migrationTag);
    expect(script.durableObjectClasses).toEqual(CLASSES);
    expect(new TextDecoder().decode(script.modules.get("worker.js")!.content)).toBe(BUNDLE);
    expect(script.metadata).toMatchObject({
      main_module: "worker.js",
      compatibility_date: "2026-10-30",
      compatibility_flags: ["nodejs_compat"],
    });
    expect(script.metadata.bindings!.map((b) => `${b.type}:${b.name}`).sort()).toEqual(
      [
        "durable_object_namespace:WORKFLOW_RUNS",
        "durable_object_namespace:WORKFLOW_RUN_INDEX",
        "plain_text:PLATFORM_LOGIN_URL",
        "plain_text:PLATFORM_PROJECT_ID",
        "plain_text:PLATFORM_PROJECT_SLUG",
        "secret_text:PLATFORM_WORKER_SECRET",
        "service:PLATFORM_API",
        ...PLUGINS.map((plugin) => `service:${plugin.binding}`),
      ].sort(),
    );
    // Each plugin's binding points at its deployed worker; the three built-in plugins are always among them.
    const services = Object.fromEntries(
      script.metadata.bindings!.flatMap((b) => (b.type === "service" ? [[b.name, b.service]] : [])),
    );
    for (const plugin of PLUGINS) expect(services[plugin.binding]).toBe(pluginWorkerName(plugin));
    expect(services).toMatchObject({
      PLATFORM_API: "platform-api",
      CHATSERVER_PLUGIN: "platform-plugin-chatserver",
      WORKSPACE_PLUGIN: "platform-plugin-workspace",
      EMAIL_PLUGIN: "platform-plugin-email-send",
    });
  });

  it("binds the version and the secrets it is given by name", async () => {
    const { standIn, target } = cloudflare();
    await uploadProjectScript(target, { ...upload, version: "v3", secrets: { STRIPE_KEY: "sk_1" } });
    expect(standIn.scripts().get("proj-shop")!.metadata.bindings).toEqual(
      expect.arrayContaining([
        { type: "plain_text", name: "PLATFORM_VERSION", text: "v3" },
        { type: "secret_text", name: "STRIPE_KEY", text: "sk_1" },
      ]),
    );
  });

  it("updates the script: the same classes need no migration, and a new one migrates from the current tag", async () => {
    const { standIn, target } = cloudflare();
    const first = await uploadProjectScript(target, { ...upload, durableObjects: ["WorkflowRun"] });
    const previous = { tag: first.migrationTag, classes: ["WorkflowRun"] };
    const same = await uploadProjectScript(target, {
      ...upload,
      bundle: `${BUNDLE}//2`,
      durableObjects: ["WorkflowRun"],
      previous,
    });
    expect(same.migrationTag).toBe(first.migrationTag);
    await uploadProjectScript(target, { ...upload, durableObjects: CLASSES, previous });
    expect(standIn.scripts().get("proj-shop")!.durableObjectClasses).toEqual(CLASSES);
  });

  it("reports Cloudflare's refusal as upstream_error with Cloudflare's message", async () => {
    const { target } = cloudflare();
    // A record that lost the script's tag re-declares classes the script already has.
    await uploadProjectScript(target, { ...upload, durableObjects: CLASSES });
    await expect(uploadProjectScript(target, { ...upload, durableObjects: CLASSES })).rejects.toMatchObject({
      code: "upstream_error",
      message: expect.stringMatching(/Migration tag precondition failed/),
    });
  });

  it("reports a wrong API token as upstream_error", async () => {
    const { target } = cloudflare();
    await expect(uploadProjectScript({ ...target, apiToken: "stale" }, upload)).rejects.toMatchObject({
      code: "upstream_error",
      message: expect.stringMatching(/Authentication error/),
    });
  });

  // What Cloudflare refuses of a bundle, through the production upload (the deployment route's), with its message.
  // A bundle that does not start is the pusher's error (4xx, not retried); the rest are of what the platform sent.
  it.each<[string, string, string, string[], string, RegExp]>([
    [
      "a bundle that does not parse",
      "invalid_input",
      "this is not javascript(",
      [],
      "2026-10-30",
      /^Cloudflare refused the upload of proj-shop: Uncaught SyntaxError: Unexpected identifier 'is'/,
    ],
    [
      "a bundle that throws at its top level",
      "invalid_input",
      "throw new Error('no config'); export default {}",
      [],
      "2026-10-30",
      /^Cloudflare refused the upload of proj-shop: Uncaught Error: no config/,
    ],
    [
      "a bundle whose Durable Object classes are not exported",
      "upstream_error",
      "export default { fetch() { return new Response('hi') } }",
      CLASSES,
      "2026-10-30",
      /Cannot apply new-sqlite-class migration to class 'WorkflowRun' that is not exported by script$/,
    ],
    [
      "a compatibility date that names no day",
      "upstream_error",
      BUNDLE,
      [],
      "2026-02-30",
      /compatibility_date must be a calendar date as YYYY-MM-DD, got "2026-02-30"$/,
    ],
  ])("reports %s as %s, and the stand-in keeps nothing", async (_name, code, bundle, classes, date, message) => {
    const { standIn, target } = cloudflare();
    await expect(
      uploadProjectScript(target, { ...upload, bundle, durableObjects: classes, compatibilityDate: date }),
    ).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    expect(standIn.scripts().size).toBe(0);
  });
});
