import { BaseScripts } from "cloudflare/resources/workers-for-platforms/dispatch/namespaces/scripts/scripts";
import { createClient } from "cloudflare/tree-shakable";
import { describe, expect, it } from "vitest";
import { type AcceptedScript, createScriptUploadStandIn } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";

const API = "https://api.cloudflare.test/client/v4";
const SCRIPT_URL = `${API}/accounts/acc123/workers/dispatch/namespaces/platform-projects/scripts/proj-shop`;
const TODAY = Date.parse("2026-11-20T12:00:00Z");
const MODULE =
  "export default { fetch() { return new Response('hi') } }; export class WorkflowRun {}; export class WorkflowRunIndex {}";

const standIn = (onAccepted?: (s: AcceptedScript) => void) =>
  createScriptUploadStandIn({
    apiToken: "cf-token",
    accountId: "acc123",
    namespace: "platform-projects",
    now: () => TODAY,
    startScript: startInWorkerd,
    onAccepted,
  });

type Part = { name: string; body: string; type: string };
const mainModule: Part = { name: "worker.js", body: MODULE, type: "application/javascript+module" };
const moduleOf = (body: string): Part[] => [{ ...mainModule, body }];

/** An upload as Cloudflare's docs write it: a JSON `metadata` part and one part per module. */
function upload(metadata: unknown, parts: Part[] = [mainModule], token = "cf-token", url = SCRIPT_URL): Request {
  const form = new FormData();
  const text = typeof metadata === "string" ? metadata : JSON.stringify(metadata);
  form.append("metadata", new Blob([text], { type: "application/json" }));
  for (const part of parts) form.append(part.name, new Blob([part.body], { type: part.type }), part.name);
  return new Request(url, { method: "PUT", headers: { authorization: `Bearer ${token}` }, body: form });
}

const base = { main_module: "worker.js", compatibility_date: "2026-10-30", compatibility_flags: ["nodejs_compat"] };
const doBinding = { type: "durable_object_namespace", name: "WORKFLOW_RUNS", class_name: "WorkflowRun" };
const firstMigration = { new_tag: "v1", new_sqlite_classes: ["WorkflowRun"] };

describe("the Workers for Platforms script-upload stand-in", () => {
  it("accepts a documented upload, answers in Cloudflare's envelope and hands the script to its host", async () => {
    const seen: AcceptedScript[] = [];
    const cloudflare = standIn((s) => seen.push(s));
    const bindings = [
      { type: "service", name: "PLATFORM_API", service: "platform-api" },
      { type: "secret_text", name: "PLATFORM_WORKER_SECRET", text: "s3cret" },
      { type: "plain_text", name: "PLATFORM_PROJECT_SLUG", text: "shop" },
      doBinding,
    ];
    const response = await cloudflare.fetch(upload({ ...base, bindings, migrations: firstMigration }));
    expect(response.status).toBe(200);
    const body = (await response.json()) as any;
    expect(body).toMatchObject({
      success: true,
      errors: [],
      messages: [],
      result: {
        id: "proj-shop",
        created_on: "2026-11-20T12:00:00.000Z",
        modified_on: "2026-11-20T12:00:00.000Z",
        migration_tag: "v1",
      },
    });
    expect(body.result.etag).toMatch(/^[0-9a-f]{64}$/);

    const script = cloudflare.scripts().get("proj-shop")!;
    expect(seen).toEqual([script]);
    expect(script.metadata.bindings).toEqual(bindings);
    expect(script.migrationTag).toBe("v1");
    expect(script.durableObjectClasses).toEqual(["WorkflowRun"]);
    expect(new TextDecoder().decode(script.modules.get("worker.js")!.content)).toBe(MODULE);
    expect(script.modules.get("worker.js")!.contentType).toBe("application/javascript+module");
  });

  it("keeps the classes of earlier uploads: a later upload binds them without a migration, or migrates from their tag", async () => {
    const cloudflare = standIn();
    await cloudflare.fetch(upload({ ...base, bindings: [doBinding], migrations: firstMigration }));
    expect((await cloudflare.fetch(upload({ ...base, bindings: [doBinding] }))).status).toBe(200);
    expect(cloudflare.scripts().get("proj-shop")!.metadata).not.toHaveProperty("migrations");
    const index = { type: "durable_object_namespace", name: "WORKFLOW_RUN_INDEX", class_name: "WorkflowRunIndex" };
    const second = await cloudflare.fetch(
      upload({
        ...base,
        bindings: [doBinding, index],
        migrations: { old_tag: "v1", new_tag: "v2", new_sqlite_classes: ["WorkflowRunIndex"] },
      }),
    );
    expect(second.status).toBe(200);
    expect(cloudflare.scripts().get("proj-shop")).toMatchObject({
      migrationTag: "v2",
      durableObjectClasses: ["WorkflowRun", "WorkflowRunIndex"],
      createdOn: "2026-11-20T12:00:00.000Z",
    });
  });

  // Each row: an upload Cloudflare's contract refuses, and the code and message Cloudflare answers with.
  it.each<[string, () => Request, number, RegExp, boolean?]>([
    [
      "a binding of an unknown type",
      () => upload({ ...base, bindings: [{ type: "teleporter", name: "BEAM" }] }),
      10021,
      /unknown type 'teleporter'/,
    ],
    ["a missing main_module", () => upload({ compatibility_date: "2026-10-30" }), 10021, /main_module is required/],
    [
      "main_module naming no part",
      () => upload({ ...base, main_module: "index.js" }),
      10021,
      /No such module "index.js"/,
    ],
    [
      "a Durable Object binding without a migration",
      () => upload({ ...base, bindings: [doBinding] }),
      10061,
      /Cannot create binding for class 'WorkflowRun'/,
    ],
    [
      "an old_tag that is not the script's current tag",
      () => upload({ ...base, bindings: [doBinding], migrations: { ...firstMigration, old_tag: "v0" } }),
      10079,
      /Migration tag precondition failed; current tag is ''/,
    ],
    ["metadata that is not JSON", () => upload("{main_module:"), 10021, /not valid JSON/],
    [
      "nine tags (Cloudflare keeps at most 8)",
      () => upload({ ...base, tags: ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9"] }),
      10021,
      /at most 8 tags, got 9/,
    ],
    [
      "a KV binding naming a namespace the account does not have",
      () =>
        upload({
          ...base,
          bindings: [{ type: "kv_namespace", name: "CACHE", namespace_id: "0f2ac74b498b48028cb68387c421e279" }],
        }),
      10042,
      /^KV namespace '0f2ac74b498b48028cb68387c421e279' is not valid\./,
    ],
    [
      "two bindings with one name",
      () =>
        upload({
          ...base,
          bindings: [
            { type: "plain_text", name: "SLUG", text: "a" },
            { type: "plain_text", name: "SLUG", text: "b" },
          ],
        }),
      10021,
      /'SLUG' is used more than once/,
    ],
    [
      "a binding name that is no identifier",
      () => upload({ ...base, bindings: [{ type: "plain_text", name: "MY-VAR", text: "a" }] }),
      10021,
      /not a valid JavaScript identifier/,
    ],
    [
      "a service binding without its service",
      () => upload({ ...base, bindings: [{ type: "service", name: "PLATFORM_API" }] }),
      10021,
      /service binding PLATFORM_API needs 'service'/,
    ],
    [
      "a secret_text binding without text",
      () => upload({ ...base, bindings: [{ type: "secret_text", name: "S" }] }),
      10021,
      /needs 'text'/,
    ],
    [
      "a plain_text binding whose text is not a string",
      () => upload({ ...base, bindings: [{ type: "plain_text", name: "N", text: 3 }] }),
      10021,
      /'text' must be a string/,
    ],
    [
      "a Durable Object binding without class_name",
      () => upload({ ...base, bindings: [{ type: "durable_object_namespace", name: "X" }] }),
      10021,
      /needs 'class_name'/,
    ],
    [
      "an unknown top-level metadata field",
      () => upload({ ...base, durable_objects: ["WorkflowRun"] }),
      10021,
      /unknown field 'durable_objects'/,
    ],
    [
      "a compatibility date in the future",
      () => upload({ ...base, compatibility_date: "2026-11-21" }),
      10021,
      /in the future: 2026-11-21/,
    ],
    [
      "a compatibility date the runtime does not support yet",
      () => upload({ ...base, compatibility_date: "2026-11-01" }),
      10021,
      /newer than the runtime supports \(2026-10-30\)/,
    ],
    [
      "a malformed compatibility date",
      () => upload({ ...base, compatibility_date: "30/10/2026" }),
      10021,
      /YYYY-MM-DD/,
    ],
    [
      "a main module that is not an ES module",
      () => upload(base, [{ ...mainModule, type: "application/javascript" }]),
      10021,
      /must be an ES module/,
    ],
    [
      "a module of an unsupported Content-Type",
      () => upload(base, [mainModule, { name: "x.html", body: "<p>", type: "text/html" }]),
      10021,
      /unsupported Content-Type text\/html/,
    ],
    [
      "a compatibility date that names no day",
      () => upload({ ...base, compatibility_date: "2026-02-30" }),
      10021,
      /compatibility_date must be a calendar date as YYYY-MM-DD, got "2026-02-30"/,
    ],
    [
      "an unknown compatibility flag (the installed workerd's own list)",
      () => upload({ ...base, compatibility_flags: ["nodejs_compat", "no_such_flag_2026"] }),
      10021,
      /^No such compatibility flag: no_such_flag_2026$/,
    ],
    [
      "a module that does not parse",
      () => upload(base, moduleOf("this is not javascript(")),
      10021,
      /^Uncaught SyntaxError: Unexpected identifier 'is'\n\s+at worker\.js:1:5$/,
    ],
    [
      "a module whose top level throws",
      () => upload(base, moduleOf("throw new Error('boom'); export default { fetch() {} }")),
      10021,
      /^Uncaught Error: boom\n\s+at worker\.js:1:7$/,
    ],
    [
      "an import of a module that was not uploaded",
      () => upload(base, moduleOf("import './missing.js'; export default { fetch() {} }")),
      10021,
      /missing\.js/,
    ],
    [
      "a module that registers no event handler",
      () => upload(base, moduleOf("export const answer = 42;")),
      10068,
      /^The uploaded script has no registered event handlers\.$/,
    ],
    [
      "a migration naming a class the module does not export",
      () =>
        upload(
          { ...base, bindings: [doBinding], migrations: firstMigration },
          moduleOf("export default { fetch() { return new Response('hi') } }"),
        ),
      10070,
      /^Cannot apply new-sqlite-class migration to class 'WorkflowRun' that is not exported by script$/,
    ],
    [
      "a body that is not multipart",
      () =>
        new Request(SCRIPT_URL, {
          method: "PUT",
          headers: { authorization: "Bearer cf-token", "content-type": "application/javascript" },
          body: MODULE,
        }),
      10021,
      /expected a multipart\/form-data upload/,
    ],
  ])("refuses %s with Cloudflare's error shape and keeps nothing", async (_name, request, code, message) => {
    const cloudflare = standIn();
    const response = await cloudflare.fetch(request());
    expect(response.status).toBe(400);
    const body = (await response.json()) as any;
    expect(body).toEqual({
      success: false,
      errors: [{ code, message: expect.any(String) }],
      messages: [],
      result: null,
    });
    expect(body.errors[0].message).toMatch(message);
    expect(cloudflare.scripts().size).toBe(0);
  });

  it("accepts eight tags and a KV binding to one of the account's namespaces", async () => {
    const cloudflare = createScriptUploadStandIn({
      accountId: "acc123",
      namespace: "platform-projects",
      now: () => TODAY,
      startScript: startInWorkerd,
      kvNamespaceIds: ["0f2ac74b498b48028cb68387c421e279"],
    });
    const kv = { type: "kv_namespace", name: "CACHE", namespace_id: "0f2ac74b498b48028cb68387c421e279" };
    const tags = ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"];
    const response = await cloudflare.fetch(upload({ ...base, tags, bindings: [kv] }));
    expect(response.status).toBe(200);
    expect(cloudflare.scripts().get("proj-shop")!.metadata).toMatchObject({ tags, bindings: [kv] });
  });

  it.each([
    ["a second new-class migration of a class the script already has", 10074, { new_sqlite_classes: ["WorkflowRun"] }],
    ["deleting a class that a binding still references", 10061, { deleted_classes: ["WorkflowRun"] }],
  ])("refuses %s (%d), keeping the migration it had", async (_name, code, migration) => {
    const cloudflare = standIn();
    await cloudflare.fetch(upload({ ...base, bindings: [doBinding], migrations: firstMigration }));
    const refused = await cloudflare.fetch(
      upload({ ...base, bindings: [doBinding], migrations: { old_tag: "v1", new_tag: "v2", ...migration } }),
    );
    expect(((await refused.json()) as any).errors[0].code).toBe(code);
    expect(cloudflare.scripts().get("proj-shop")!.migrationTag).toBe("v1");
  });

  it("refuses a binding to a class the new module no longer exports (10061), keeping the script it had", async () => {
    const cloudflare = standIn();
    await cloudflare.fetch(upload({ ...base, bindings: [doBinding], migrations: firstMigration }));
    const response = await cloudflare.fetch(
      upload({ ...base, bindings: [doBinding] }, moduleOf("export default { fetch() { return new Response('v2') } }")),
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as any).errors[0]).toEqual({
      code: 10061,
      message: "Cannot create binding for class 'WorkflowRun' that is not exported by the script",
    });
    expect(new TextDecoder().decode(cloudflare.scripts().get("proj-shop")!.modules.get("worker.js")!.content)).toBe(
      MODULE,
    );
  });

  it("accepts a default export that is an entrypoint class, and an upload with no handler but a class", async () => {
    const cloudflare = standIn();
    const entrypoint = "export default class { fetch() { return new Response('hi') } }";
    expect((await cloudflare.fetch(upload(base, moduleOf(entrypoint)))).status).toBe(200);
    const onlyClass = "export class WorkflowRun {}";
    const response = await cloudflare.fetch(upload({ ...base, migrations: firstMigration }, moduleOf(onlyClass)));
    expect(response.status).toBe(200);
  });

  it.each([
    ["a wrong token", () => upload(base, [mainModule], "forged"), 403, 10000],
    [
      "another account",
      () => upload(base, [mainModule], "cf-token", SCRIPT_URL.replace("acc123", "acc999")),
      404,
      7003,
    ],
    [
      "a path that is no script",
      () => upload(base, [mainModule], "cf-token", `${API}/accounts/acc123/workers`),
      404,
      7000,
    ],
    ["another method", () => new Request(SCRIPT_URL, { headers: { authorization: "Bearer cf-token" } }), 405, 7001],
  ])("answers %s as Cloudflare's gateway does", async (_name, request, status, code) => {
    const cloudflare = standIn();
    const response = await cloudflare.fetch(request());
    expect(response.status).toBe(status);
    expect(((await response.json()) as any).errors[0].code).toBe(code);
    expect(cloudflare.scripts().size).toBe(0);
  });

  it("refuses the request the SDK builds from its own parameters (why dispatchUpload.ts sends the body itself)", async () => {
    const cloudflare = standIn();
    const client = createClient({
      apiToken: "cf-token",
      baseURL: API,
      maxRetries: 0,
      fetch: (input, init) => cloudflare.fetch(new Request(input, init)),
      resources: [BaseScripts],
    });
    const refused = client.workersForPlatforms.dispatch.namespaces.scripts.update("proj-shop", {
      account_id: "acc123",
      dispatch_namespace: "platform-projects",
      metadata: base,
      files: [new File([MODULE], "worker.js", { type: "application/javascript+module" })],
    });
    // SDK 7.3.0 sends `Content-Type: application/javascript` over a body of `metadata[main_module]`
    // fields and a `files[]` part: Cloudflare reads that as a service-worker script.
    await expect(refused).rejects.toMatchObject({ status: 400, errors: [{ code: 10021 }] });
    expect(cloudflare.scripts().size).toBe(0);
  });
});
