import { describe, expect, it } from "vitest";
import { INTERNAL_HEADER, pathAndQueryOf, verifyRequestToken } from "#src/core/requestToken.ts";
import {
  apiHarness,
  callApi,
  createUserWithToken,
  expectError,
  fakeDispatcher,
  userWithProject,
} from "#test/support/workerd/index.ts";

const BATCH = {
  messages: [{ offset: 3, topic: "progress", data: { pct: 50 }, at: 1, step: "start", attempt: 1 }],
  ended: false,
};

/** A project answering its stream route with one batch. */
async function ownerOfStreamingProject() {
  const dispatcher = fakeDispatcher(async (request) =>
    new URL(request.url).pathname.endsWith("/stream")
      ? Response.json(BATCH)
      : Response.json({ error: { code: "not_found", message: "Not found." } }, { status: 404 }),
  );
  const harness = apiHarness({ dispatcher });
  const { user, row } = await userWithProject("ada@example.com", "shop");
  return { user, row, harness, calls: dispatcher.calls };
}

describe("GET /projects/:slug/workflows/:runId/stream (platform workflow watch)", () => {
  it("asks the project's internal stream route, signed, with the query as given, and relays its batch", async () => {
    const { user, row, harness, calls } = await ownerOfStreamingProject();
    const response = await callApi("GET", "/projects/shop/workflows/run-1/stream?from=3&topic=progress", {
      token: user.token,
      env: harness.env,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(BATCH);
    const call = calls[0]!;
    expect(call.method).toBe("GET");
    expect(pathAndQueryOf(call.url)).toBe("/__workflow/runs/run-1/stream?from=3&topic=progress");
    const check = await verifyRequestToken(
      "internal",
      call.headers.get(INTERNAL_HEADER),
      { method: call.method, pathAndQuery: pathAndQueryOf(call.url), body: call.body },
      { lookupSecret: (id) => (id === String(row.id) ? row.worker_secret : null) },
    );
    expect(check).toEqual({ ok: true, projectId: String(row.id) });
  });

  it("without a token → 401, nothing reaches the project", async () => {
    const { harness, calls } = await ownerOfStreamingProject();
    await expectError(
      await callApi("GET", "/projects/shop/workflows/run-1/stream", { headers: {}, env: harness.env }),
      401,
      "unauthorized",
    );
    expect(calls).toEqual([]);
  });

  it("another user's project → 404 as if it did not exist, nothing reaches it", async () => {
    const { harness, calls } = await ownerOfStreamingProject();
    const mallory = await createUserWithToken("mallory@example.com");
    await expectError(
      await callApi("GET", "/projects/shop/workflows/run-1/stream", { token: mallory.token, env: harness.env }),
      404,
      "not_found",
    );
    expect(calls).toEqual([]);
  });
});
