import { describe, expect, it } from "vitest";
import {
  apiHarness,
  callApi,
  createUserWithToken,
  expectError,
  fakeDispatcher,
  userWithProject,
} from "#test/support/workerd/index.ts";

/**
 * Beyond the spec: the API worker's pause, resume, rerun and bulk routes
 * check their bodies, then forward canonical JSON to the project's internal
 * routes and relay its answer. What the project does with them is the
 * conformance suite's (test/conformance/runOperationsConformance.ts).
 */

async function ownerWithProject() {
  const dispatcher = fakeDispatcher(async (request) =>
    Response.json({ path: new URL(request.url).pathname }, { status: 200 }),
  );
  const harness = apiHarness({ dispatcher });
  const { user, row } = await userWithProject("ada@example.com", "shop");
  return { user, row, harness, calls: dispatcher.calls };
}

const forwards = [
  { path: "run-1/pause", body: { reason: "looking" }, to: "/__workflow/runs/run-1/pause", sent: { reason: "looking" } },
  { path: "run-1/pause", body: undefined, to: "/__workflow/runs/run-1/pause", sent: {} },
  { path: "run-1/resume", body: undefined, to: "/__workflow/runs/run-1/resume", sent: {} },
  {
    path: "run-1/rerun",
    body: { fromStep: "charge" },
    to: "/__workflow/runs/run-1/rerun",
    sent: { fromStep: "charge" },
  },
  { path: "run-1/rerun", body: undefined, to: "/__workflow/runs/run-1/rerun", sent: {} },
  {
    path: "cancel",
    body: { filter: { status: "running", name: "checkout" }, dryRun: true },
    to: "/__workflow/cancel-many",
    sent: { filter: { status: "running", name: "checkout" }, dryRun: true },
  },
  {
    path: "rerun",
    body: { filter: { status: "failed" }, fromStep: "charge" },
    to: "/__workflow/rerun-many",
    sent: { filter: { status: "failed" }, fromStep: "charge" },
  },
] as const;

describe("POST /projects/:slug/workflows/… pause, resume, rerun, cancel (bulk), rerun (bulk)", () => {
  it.each(forwards)("$path $body → the project's $to with $sent", async ({ path, body, to, sent }) => {
    const { user, harness, calls } = await ownerWithProject();
    const response = await callApi("POST", `/projects/shop/workflows/${path}`, {
      token: user.token,
      ...(body === undefined ? {} : { body }),
      env: harness.env,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ path: to });
    expect(calls).toHaveLength(1);
    expect({ method: calls[0]!.method, path: calls[0]!.url.pathname }).toEqual({ method: "POST", path: to });
    expect(JSON.parse(calls[0]!.body)).toEqual(sent);
  });

  it.each([
    { path: "run-1/pause", body: { reason: 5 } },
    { path: "run-1/rerun", body: { fromStep: "" } },
    { path: "run-1/rerun", body: { from: "charge" } },
    { path: "cancel", body: {} },
    { path: "cancel", body: { filter: {} } },
    { path: "cancel", body: { filter: [] } },
    { path: "cancel", body: { filter: { status: "running" }, dryRun: "yes" } },
    { path: "rerun", body: { filter: { status: "failed" }, reason: "x" } },
  ])("refuses $path $body with 400 invalid_input, nothing reaches the project", async ({ path, body }) => {
    const { user, harness, calls } = await ownerWithProject();
    await expectError(
      await callApi("POST", `/projects/shop/workflows/${path}`, { token: user.token, body, env: harness.env }),
      400,
      "invalid_input",
    );
    expect(calls).toEqual([]);
  });

  it.each(["run-1/pause", "run-1/resume", "run-1/rerun", "cancel", "rerun"])(
    "%s on another user's project → 404, nothing reaches it",
    async (path) => {
      const { harness, calls } = await ownerWithProject();
      const mallory = await createUserWithToken("mallory@example.com");
      await expectError(
        await callApi("POST", `/projects/shop/workflows/${path}`, {
          token: mallory.token,
          body: { filter: { status: "failed" } },
          env: harness.env,
        }),
        404,
        "not_found",
      );
      expect(calls).toEqual([]);
    },
  );
});
