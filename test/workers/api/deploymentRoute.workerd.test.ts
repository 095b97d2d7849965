import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callJson, deployTarget } from "#test/support/workerd/index.ts";

const call = callJson;

async function userWithProject(email: string, slug: string, isPrivate = false) {
  const user = await call("POST", "/admin/users", { email }, "test-admin-token");
  const project = await call("POST", "/projects", { slug, private: isPrivate }, user.json.token);
  return { token: user.json.token as string, project: project.json.project };
}

/** A new user creates `slug` and pushes `body` to the stand-in account. */
async function push(
  slug: string,
  body: unknown,
  options: { private?: boolean; cloudflare?: ReturnType<typeof deployTarget> } = {},
) {
  const cloudflare = options.cloudflare ?? deployTarget();
  const { token } = await userWithProject("dev@example.com", slug, options.private);
  const result = await call("PUT", `/projects/${slug}/deployment`, body, token, cloudflare.env);
  return { cloudflare, token, result };
}

const BUNDLE =
  "export default { fetch() { return new Response('hi') } }; export class WorkflowRun {}; export class WorkflowRunIndex {}";

describe("PUT /projects/:slug/deployment", () => {
  it("uploads the module with every project binding and records the crons", async () => {
    const { cloudflare, token, result } = await push("shop", {
      bundle: BUNDLE,
      metadata: {
        crons: [{ name: "__workflow-recovery", schedule: "* * * * *" }],
        durableObjects: ["WorkflowRun", "WorkflowRunIndex"],
      },
    });
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({ scriptName: "proj-shop", url: "https://shop.example.test/" });

    expect(cloudflare.uploads).toHaveLength(1);
    const upload = cloudflare.uploads[0]!;
    expect(upload.name).toBe("proj-shop");
    expect(new TextDecoder().decode(upload.modules.get("worker.js")!.content)).toBe(BUNDLE);
    expect(upload.modules.get("worker.js")!.contentType).toBe("application/javascript+module");
    expect(upload.metadata.main_module).toBe("worker.js");
    const bindings = Object.fromEntries(upload.metadata.bindings!.map((b) => [b.name, b]));
    expect(Object.keys(bindings).sort()).toEqual(
      [
        "CHATSERVER_PLUGIN",
        "EMAIL_PLUGIN",
        "PLATFORM_API",
        "PLATFORM_PROJECT_ID",
        "PLATFORM_PROJECT_SLUG",
        "PLATFORM_PROJECT_URL",
        "PLATFORM_VERSION",
        "PLATFORM_WORKER_SECRET",
        "WORKFLOW_RUNS",
        "WORKFLOW_RUN_INDEX",
        "WORKSPACE_PLUGIN",
      ].sort(),
    );
    const secret = await env.DB.prepare("SELECT worker_secret FROM projects WHERE slug = 'shop'").first<string>(
      "worker_secret",
    );
    expect(bindings.PLATFORM_WORKER_SECRET).toEqual({
      type: "secret_text",
      name: "PLATFORM_WORKER_SECRET",
      text: secret,
    });
    expect(bindings.PLATFORM_VERSION).toEqual({ type: "plain_text", name: "PLATFORM_VERSION", text: "v1" });
    // The origin of its callback and stream URLs: the URL the push answers.
    expect(bindings.PLATFORM_PROJECT_URL).toEqual({
      type: "plain_text",
      name: "PLATFORM_PROJECT_URL",
      text: "https://shop.example.test/",
    });
    expect(bindings.WORKFLOW_RUNS).toEqual({
      type: "durable_object_namespace",
      name: "WORKFLOW_RUNS",
      class_name: "WorkflowRun",
    });
    expect(upload.metadata.migrations).toMatchObject({ new_sqlite_classes: ["WorkflowRun", "WorkflowRunIndex"] });
    expect(upload.metadata.migrations).not.toHaveProperty("old_tag");
    expect(upload.durableObjectClasses).toEqual(["WorkflowRun", "WorkflowRunIndex"]);

    const crons = await env.DB.prepare("SELECT name, schedule FROM project_crons").all();
    expect(crons.results).toEqual([{ name: "__workflow-recovery", schedule: "* * * * *" }]);

    // A second deploy with the same classes declares no new migration.
    await call(
      "PUT",
      "/projects/shop/deployment",
      { bundle: BUNDLE, metadata: { durableObjects: ["WorkflowRun", "WorkflowRunIndex"] } },
      token,
      cloudflare.env,
    );
    expect(cloudflare.uploads[1]!.metadata.migrations).toBeUndefined();
  });

  it("gives a private deployment its /<slug>/ URL", async () => {
    const { result } = await push("inside", { bundle: BUNDLE, metadata: {} }, { private: true });
    expect(result.json.url).toBe("https://example.test/inside/");
  });

  it.each([
    ["no CLI token", null, { bundle: BUNDLE, metadata: {} }, 401, "unauthorized"],
    ["an empty bundle", "owner", { bundle: "", metadata: {} }, 400, "invalid_input"],
    ["metadata that is not an object", "owner", { bundle: BUNDLE, metadata: [] }, 400, "invalid_input"],
    [
      "an unknown Durable Object class",
      "owner",
      { bundle: BUNDLE, metadata: { durableObjects: ["Evil"] } },
      400,
      "invalid_input",
    ],
    [
      "a bad cron",
      "owner",
      { bundle: BUNDLE, metadata: { crons: [{ name: "x", schedule: "every minute" }] } },
      400,
      "invalid_input",
    ],
    ["malformed JSON", "owner", "{nope", 400, "malformed_json"],
    ["another user's project", "other", { bundle: BUNDLE, metadata: {} }, 404, "not_found"],
  ])("refuses %s and uploads nothing", async (_name, who, body, status, code) => {
    const cloudflare = deployTarget();
    const owner = await userWithProject("owner@example.com", "shop");
    const other = await call("POST", "/admin/users", { email: "other@example.com" }, "test-admin-token");
    const token = who === "owner" ? owner.token : who === "other" ? other.json.token : null;
    const result = await call("PUT", "/projects/shop/deployment", body, token, cloudflare.env);
    expect(result.status).toBe(status);
    expect(result.json.error.code).toBe(code);
    expect(cloudflare.uploads).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_deployments").first("n")).toBe(0);
  });

  // Budgets the platform holds, whatever the tenant's build sends: 20 schedules, 256-character crons, metadata it can store.
  const schedules = (count: number) =>
    Array.from({ length: count }, (_, i) => ({ name: `__schedule/w${i}`, schedule: "0 * * * *" }));
  const longCron = `${Array.from({ length: 60 }, (_, m) => m).join(",")} ${Array.from({ length: 24 }, (_, h) => h).join(",")} ${Array.from({ length: 31 }, (_, d) => d + 1).join(",")} * *`;
  it.each([
    ["a 21st workflow schedule", { crons: schedules(21) }, 400, /at most 20 workflow schedules; this push has 21\./],
    [
      `a valid cron of ${longCron.length} characters`,
      { crons: [{ name: "busy", schedule: longCron }] },
      400,
      new RegExp(`Cron "busy" has a schedule of ${longCron.length} characters; the limit is 256\\.`),
    ],
    [
      "metadata over 100 KiB as JSON",
      { notes: "x".repeat(100 * 1024) },
      413,
      /metadata \(crons, workflows, handlers\) is \d+ bytes as JSON; the limit is 102400 bytes\./,
    ],
  ])("refuses %s before the script goes live", async (_name, metadata, status, message) => {
    const { cloudflare, result } = await push("shop", { bundle: BUNDLE, metadata });
    expect(result.status).toBe(status);
    expect(result.json.error.message).toMatch(message);
    expect(cloudflare.uploads).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_deployments").first("n")).toBe(0);
  });

  it("accepts 20 workflow schedules", async () => {
    const { cloudflare, result } = await push("shop", { bundle: BUNDLE, metadata: { crons: schedules(20) } });
    expect(result.status).toBe(200);
    expect(cloudflare.uploads).toHaveLength(1);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_crons").first("n")).toBe(20);
  });

  it("refuses a bundle over the size limit with 413", async () => {
    const { cloudflare, result } = await push("shop", {
      bundle: "x".repeat(11 * 1024 * 1024 + 1),
      metadata: {},
    });
    expect(result.status).toBe(413);
    expect(cloudflare.uploads).toHaveLength(0);
  });

  it("reports Cloudflare's refusal as 502 and records nothing", async () => {
    // A runtime older than the platform's compatibility date refuses the upload.
    const { cloudflare, result } = await push(
      "shop",
      { bundle: BUNDLE, metadata: { crons: [{ name: "c", schedule: "* * * * *" }] } },
      { cloudflare: deployTarget({ latestCompatibilityDate: "2026-10-01" }) },
    );
    expect(result.status).toBe(502);
    expect(result.json.error.message).toMatch(/compatibility_date 2026-10-30 is newer than the runtime supports/);
    expect(cloudflare.uploads).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_deployments").first("n")).toBe(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_crons").first("n")).toBe(0);
  });

  // What Cloudflare refuses of a pushed bundle: the API answers with Cloudflare's words (400 when the bundle's top
  // level does not run, 502 otherwise), and nothing is kept.
  it.each([
    [
      "a bundle that cannot start (the one upload that took `platform up` down)",
      { bundle: "this is not javascript(", metadata: {} },
      /^Cloudflare refused the upload of proj-shop: Uncaught SyntaxError: Unexpected identifier 'is'/,
      400,
    ],
    [
      "a bundle whose top level throws",
      { bundle: "throw new Error('boom'); export default { fetch() {} }", metadata: {} },
      /Uncaught Error: boom/,
      400,
    ],
    [
      "a bundle that does not export the Durable Object classes it declares",
      {
        bundle: "export default { fetch() { return new Response('hi') } }",
        metadata: { durableObjects: ["WorkflowRun"] },
      },
      /Cannot apply new-sqlite-class migration to class 'WorkflowRun' that is not exported by script$/,
      502,
    ],
    [
      "a bundle with no event handler",
      { bundle: "export const nothing = 1;", metadata: {} },
      /The uploaded script has no registered event handlers\.$/,
      502,
    ],
  ] as const)("refuses %s with Cloudflare's message, recording nothing", async (_name, body, message, status) => {
    const { cloudflare, result } = await push("shop", body);
    // A bundle whose top level does not run is the user's error (400 invalid_input: a client retrying 5xx would loop).
    expect(result.status).toBe(status);
    expect(result.json.error.code).toBe(status === 400 ? "invalid_input" : "upstream_error");
    expect(result.json.error.message).toMatch(message);
    expect(cloudflare.uploads).toHaveLength(0);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM project_deployments").first("n")).toBe(0);
  });

  it("says clearly when the platform has no deploy configuration", async () => {
    const { token } = await userWithProject("dev@example.com", "shop");
    const result = await call("PUT", "/projects/shop/deployment", { bundle: BUNDLE, metadata: {} }, token);
    expect(result.status).toBe(500);
    expect(result.json.error.message).toMatch(/not configured to deploy/);
  });
});

describe("PUT /projects/:slug/deployment hands the project's handlers to the plugins", () => {
  async function setUp(slug: string) {
    const { verifyRequestToken, IDENTITY_HEADER } = await import("#src/core/requestToken.ts");
    const cloudflare = deployTarget();
    const { token } = await userWithProject(`dev-${slug}@example.com`, slug);
    const secret = (await env.DB.prepare("SELECT worker_secret FROM projects WHERE slug = ?")
      .bind(slug)
      .first<string>("worker_secret"))!;
    const projectId = String(
      await env.DB.prepare("SELECT id FROM projects WHERE slug = ?").bind(slug).first<number>("id"),
    );
    const received: Record<string, { verified: boolean; body: unknown }[]> = {};
    const plugin = (name: string, status: number) => ({
      async fetch(input: RequestInfo, init?: RequestInit) {
        const request = new Request(input, init);
        const bytes = new Uint8Array(await request.arrayBuffer());
        const check = await verifyRequestToken(
          "identity",
          request.headers.get(IDENTITY_HEADER),
          { method: request.method, pathAndQuery: new URL(request.url).pathname, body: bytes },
          { lookupSecret: (id) => (id === projectId ? secret : null) },
        );
        received[name] = [
          ...(received[name] ?? []),
          { verified: check.ok, body: JSON.parse(new TextDecoder().decode(bytes)) },
        ];
        return new Response(status === 200 ? "{}" : "nope", { status });
      },
    });
    const deploy = (metadata: object, workspaceStatus = 200) =>
      call("PUT", `/projects/${slug}/deployment`, { bundle: BUNDLE, metadata }, token, {
        ...cloudflare.env,
        CHATSERVER_PLUGIN: plugin("chatserver", 200),
        WORKSPACE_PLUGIN: plugin("workspace", workspaceStatus),
        EMAIL_PLUGIN: plugin("email", 200),
      });
    return { received, deploy };
  }

  it("calls POST /deploy of each plugin the project uses, with its identity token and its plugins metadata, reporting refusals", async () => {
    const { received, deploy } = await setUp("shop");
    const plugins = {
      chatserver: { commands: [{ name: "hello", description: "Say hello" }] },
      workspace: { events: ["message"] },
    };
    const result = await deploy({ plugins }, 503);
    expect(result.status).toBe(200);
    expect(received.chatserver).toEqual([{ verified: true, body: { plugins } }]);
    expect(received.workspace).toEqual([{ verified: true, body: { plugins } }]);
    expect(result.json.plugins).toEqual({
      chatserver: "registered",
      workspace: expect.stringMatching(/^refused \(503\)/),
    });
    // Email has no handlers to hand over: never called, never reported.
    expect(received.email).toBeUndefined();
  });

  it("leaves out the plugins a project does not use, and tells one it used before that it has no handlers any more", async () => {
    const { received, deploy } = await setUp("quiet");
    const first = await deploy({ plugins: { workspace: { events: ["message"] } } });
    expect(first.json.plugins).toEqual({ workspace: "registered" });
    expect(received.chatserver).toBeUndefined();

    const second = await deploy({ plugins: { chatserver: { commands: [] } } });
    expect(second.json.plugins).toEqual({ chatserver: "registered", workspace: "unregistered" });
    expect(received.workspace?.[1]).toEqual({ verified: true, body: { plugins: { chatserver: { commands: [] } } } });

    const third = await deploy({});
    expect(third.json.plugins).toEqual({ chatserver: "unregistered" });
    const fourth = await deploy({});
    expect(fourth.json.plugins).toEqual({});
    expect(received.workspace).toHaveLength(2);
    expect(received.chatserver).toHaveLength(2);
    expect(received.email).toBeUndefined();
  });
});

describe("PUT /projects/:slug/deployment and the project's log", () => {
  it("names the API worker the script's tail consumer, and keeps the bundle's source map for the stacks it shows", async () => {
    const { projectLogOf } = await import("#src/workers/api/projectLogs/projectLogRoutes.ts");
    const cloudflare = deployTarget();
    const { token, project } = await userWithProject("dev@example.com", "traced");
    const sourceMap = { version: 3, sources: ["src/index.ts"], mappings: "AAGC" };
    const deployed = await call(
      "PUT",
      "/projects/traced/deployment",
      { bundle: BUNDLE, metadata: {}, sourceMap },
      token,
      cloudflare.env,
    );
    expect(deployed.status).toBe(200);
    expect(cloudflare.uploads[0]!.metadata.tail_consumers).toEqual([{ service: "platform-api" }]);
    const log = projectLogOf(env as never, project.id)!;
    expect(await log.mapStacks(["at f (worker.js:1:1)"])).toEqual(["at f (src/index.ts:4:2)"]);
    // A version pushed without a map: its stacks are shown as thrown, never through the old map.
    await call("PUT", "/projects/traced/deployment", { bundle: BUNDLE, metadata: {} }, token, cloudflare.env);
    expect(await log.mapStacks(["at f (worker.js:1:1)"])).toEqual(["at f (worker.js:1:1)"]);
    const refused = await call(
      "PUT",
      "/projects/traced/deployment",
      { bundle: BUNDLE, metadata: {}, sourceMap: { version: 2 } },
      token,
      cloudflare.env,
    );
    expect(refused.status).toBe(400);
    expect(refused.json.error.message).toContain("sourceMap must be a version 3 source map");
  });
});
