import { describe, expect, it } from "vitest";
import type { AcceptedScript } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { callJson, deployTarget } from "#test/support/workerd/index.ts";

/**
 * The stranded-runs check at `PUT /projects/:slug/deployment`: the running version is
 * asked (its `/__workflow/check`) which live runs the new workflows would
 * strand, before anything is uploaded. The project worker here is a stand-in
 * that records the question and answers as a project's runtime does; what a
 * real runtime answers is the conformance suite's (test/conformance).
 */

const BUNDLE =
  "export default { fetch() { return new Response('hi') } }; export class WorkflowRun {}; export class WorkflowRunIndex {}";
const V1_WORKFLOWS = [{ name: "order", steps: ["start", "approve"], maxAttempts: 3, stepTimeoutMS: 30_000 }];
const V2_WORKFLOWS = [{ name: "order", steps: ["start", "approval"], maxAttempts: 3, stepTimeoutMS: 30_000 }];
const STRANDED = {
  count: 23,
  runs: [{ runId: "run-1", workflow: "order", step: "approve", status: "running", missing: "step" }],
};

function setup(answer: { status: number; body: unknown }) {
  const cloudflare = deployTarget();
  const asked: { path: string; body: unknown }[] = [];
  const project = {
    async fetch(input: RequestInfo, init?: RequestInit) {
      const request = new Request(input, init);
      asked.push({ path: new URL(request.url).pathname, body: await request.json() });
      return Response.json(answer.body, { status: answer.status });
    },
  };
  const deployEnv = { ...cloudflare.env, DISPATCHER: { get: () => project } };
  return { uploads: cloudflare.uploads, asked, deployEnv };
}

const call = callJson;

async function projectOf(slug: string) {
  const user = await call("POST", "/admin/users", { email: `${slug}@example.com` }, "test-admin-token");
  await call("POST", "/projects", { slug }, user.json.token);
  return user.json.token as string;
}

const push = (token: string, slug: string, workflows: unknown[], e: object, extra: object = {}) =>
  call(
    "PUT",
    `/projects/${slug}/deployment`,
    { bundle: BUNDLE, metadata: { durableObjects: ["WorkflowRun", "WorkflowRunIndex"], workflows }, ...extra },
    token,
    e,
  );

const versionBinding = (upload: AcceptedScript) =>
  upload.metadata.bindings!.find((b) => b.name === "PLATFORM_VERSION") as { text: string } | undefined;

describe("PUT /projects/:slug/deployment: versions and the stranded-runs check", () => {
  it("refuses a push that strands live runs with 409 conflict naming them, uploads nothing; --force goes through", async () => {
    const { uploads, asked, deployEnv } = setup({ status: 200, body: STRANDED });
    const token = await projectOf("pc-refused");
    const first = await push(token, "pc-refused", V1_WORKFLOWS, deployEnv);
    expect(first.status).toBe(200);
    expect(first.json).toMatchObject({ version: "v1", deployedAt: expect.any(Number) });
    // The first version has nothing running to ask.
    expect(asked).toEqual([]);
    expect(versionBinding(uploads[0]!)?.text).toBe("v1");

    const refused = await push(token, "pc-refused", V2_WORKFLOWS, deployEnv);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({
      code: "conflict",
      details: { count: 23, stranded: STRANDED.runs },
    });
    expect(refused.json.error.message).toContain('run run-1 of "order" at step "approve"');
    expect(refused.json.error.message).toContain("renamed");
    expect(refused.json.error.message).toContain("--force");
    expect(asked).toEqual([
      {
        path: "/__workflow/check",
        body: { workflows: [{ name: "order", steps: ["start", "approval"] }] },
      },
    ]);
    expect(uploads).toHaveLength(1);

    const forced = await push(token, "pc-refused", V2_WORKFLOWS, deployEnv, { force: true });
    expect(forced.status).toBe(200);
    // A refused push is no version: the forced one is the second.
    expect(forced.json).toMatchObject({ version: "v2", stranded: STRANDED });
    expect(uploads).toHaveLength(2);
    expect(versionBinding(uploads[1]!)?.text).toBe("v2");
  });

  it("sends renamed with the new workflows; a push that strands nothing goes through unchanged", async () => {
    const { uploads, asked, deployEnv } = setup({ status: 200, body: { count: 0, runs: [] } });
    const token = await projectOf("pc-renamed");
    await push(token, "pc-renamed", V1_WORKFLOWS, deployEnv);
    const renamed = [{ ...V2_WORKFLOWS[0], renamed: { approve: "approval" } }];
    const second = await push(token, "pc-renamed", renamed, deployEnv);
    expect(second.status).toBe(200);
    expect(second.json.version).toBe("v2");
    expect(second.json).not.toHaveProperty("stranded");
    expect(asked[0]!.body).toEqual({
      workflows: [{ name: "order", steps: ["start", "approval"], renamed: { approve: "approval" } }],
    });
    expect(uploads).toHaveLength(2);
  });

  it("a running version that cannot answer the check refuses the push (502) unless forced; force must be a boolean", async () => {
    const { uploads, deployEnv } = setup({ status: 500, body: { error: { code: "internal", message: "boom" } } });
    const token = await projectOf("pc-down");
    await push(token, "pc-down", V1_WORKFLOWS, deployEnv);
    const refused = await push(token, "pc-down", V2_WORKFLOWS, deployEnv);
    expect(refused.status).toBe(502);
    expect(refused.json.error.code).toBe("upstream_error");
    expect(refused.json.error.message).toContain("--force");
    expect((await push(token, "pc-down", V2_WORKFLOWS, deployEnv, { force: "yes" })).status).toBe(400);
    expect(uploads).toHaveLength(1);
    expect((await push(token, "pc-down", V2_WORKFLOWS, deployEnv, { force: true })).status).toBe(200);
  });

  it("a running version without workflows is not asked", async () => {
    const { asked, deployEnv } = setup({ status: 200, body: STRANDED });
    const token = await projectOf("pc-none");
    await push(token, "pc-none", [], deployEnv);
    const second = await push(token, "pc-none", V2_WORKFLOWS, deployEnv);
    expect(second.status).toBe(200);
    expect(asked).toEqual([]);
  });
});
