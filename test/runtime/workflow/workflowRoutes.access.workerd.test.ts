/**
 * The workflow routes answer only the platform: without a valid `internal` token of this project
 * for exactly this request, every route answers 404 and nothing starts, moves or reaches user code.
 */
import { describe, expect, it } from "vitest";
import { signRequestToken } from "#src/core/requestToken.ts";
import { expectError, waitForLastEvent } from "#test/support/workerd/index.ts";
import { ORIGIN, OTHER_SECRET, PROJECT_ID, project, SECRET, useProjectWorker } from "./workflowRoutes.fixture.ts";
import { call, fetchWorker, getRun, start, startRun, types } from "./workflowRoutes.client.ts";

useProjectWorker();

type TokenFor = (method: string, path: string, body: string | null) => Promise<string | null>;

/** A call with the token `tokenFor` makes for it, which the worker must answer with its plain 404. */
async function expectRefused(tokenFor: TokenFor, method: string, path: string, body: string | null = null) {
  await expectError(
    await call(method, path, { body: body ?? undefined, token: await tokenFor(method, path, body) }),
    404,
    "not_found",
  );
}

/** A run of `workflow` started through the routes, once `event` is its last. */
async function startedUntil(workflow: string, event: "step_failed" | "step_completed"): Promise<string> {
  const { runId } = await startRun(workflow, null);
  await waitForLastEvent(runId, event);
  return runId;
}

describe("the workflow routes answer only the platform", () => {
  const denied: { name: string; token: TokenFor }[] = [
    { name: "no token", token: async () => null },
    {
      name: "a forged signature",
      token: async () => `${PROJECT_ID}.${Math.floor(Date.now() / 1000)}.${"A".repeat(43)}`,
    },
    {
      name: "another secret",
      token: (method, path, body) =>
        signRequestToken(
          "internal",
          { method, pathAndQuery: path, body },
          { projectId: PROJECT_ID, secret: OTHER_SECRET },
        ),
    },
    {
      name: "an identity token",
      token: (method, path, body) =>
        signRequestToken("identity", { method, pathAndQuery: path, body }, { projectId: PROJECT_ID, secret: SECRET }),
    },
    {
      name: "a token for another path",
      token: (method, _path, body) =>
        signRequestToken(
          "internal",
          { method, pathAndQuery: "/__cron/__workflow-recovery", body },
          { projectId: PROJECT_ID, secret: SECRET },
        ),
    },
  ];

  it.each(denied)("POST /__workflow/start with $name → 404 and nothing starts", async ({ token }) => {
    const body = JSON.stringify({ name: "greet", data: { name: "Eve" } });
    const response = await start(body, { token: await token("POST", "/__workflow/start", body) });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe("Not found.");
    expect(await (await call("GET", "/__workflow/runs")).json()).toEqual({ runs: [] });
    expect(project.userCodeCalls).toBe(0);
  });

  it.each(denied)(
    "GET /__workflow/runs/:id and POST /__workflow/:runId/execute with $name → 404, the run untouched",
    async ({ token }) => {
      const runId = await startedUntil("patient", "step_failed");
      await expectRefused(token, "GET", `/__workflow/runs/${runId}`);
      await expectRefused(token, "POST", `/__workflow/${runId}/execute`);
      await expectRefused(token, "GET", "/__workflow/runs");
      expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_failed"]);
      expect(project.userCodeCalls).toBe(0);
    },
  );

  it.each(denied)(
    "POST /__workflow/runs/:id/cancel and /events with $name → 404, the run untouched",
    async ({ token }) => {
      const runId = await startedUntil("approval", "step_completed");
      for (const [path, body] of [
        [`/__workflow/runs/${runId}/cancel`, JSON.stringify({ reason: "forged" })],
        [`/__workflow/runs/${runId}/events`, JSON.stringify({ name: "approval", payload: "forged" })],
      ] as const) {
        await expectRefused(token, "POST", path, body);
      }
      // A valid token replayed with another body (the signature covers it) is refused too.
      const path = `/__workflow/runs/${runId}/events`;
      const signedForOther = async () =>
        signRequestToken(
          "internal",
          { method: "POST", pathAndQuery: path, body: JSON.stringify({ name: "other" }) },
          { projectId: PROJECT_ID, secret: SECRET },
        );
      await expectRefused(signedForOther, "POST", path, JSON.stringify({ name: "approval" }));
      expect(types(await getRun(runId))).toEqual(["workflow_created", "step_started", "step_completed"]);
      expect(project.userCodeCalls).toBe(0);
    },
  );

  it("user code still answers its own routes", async () => {
    const response = await fetchWorker(new Request(`${ORIGIN}/hello`));
    expect(await response.text()).toBe("hello from user code");
  });
});
