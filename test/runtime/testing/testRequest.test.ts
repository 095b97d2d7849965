import { Router } from "itty-router";
import { afterEach, describe, expect, it } from "vitest";
import { auth, email, PlatformError } from "platform";
import { TEST_ORIGIN, testRequest } from "platform/testing";

// A small project as a user writes one: sign-in on /api/private/*, a route that emails the signed-in user.
function project() {
  const router = Router();
  router.get("/", async (request) => Response.json({ user: await auth.user(request) }));
  router.all("/api/private/*", auth.require());
  router.post("/api/private/welcome", async (request) => {
    const user = (await auth.user(request))!;
    const { id } = await email.send({ to: user.email, subject: `Welcome, ${user.name}`, html: "<p>Hi</p>" });
    return Response.json({ id });
  });
  router.get("/api/hello/:name", ({ params }) => {
    if (!/^[a-z]+$/i.test(params.name!)) throw new PlatformError("invalid_input", "name must be letters.");
    return Response.json({ hello: params.name });
  });
  router.post("/api/later", (_request, _env, ctx: ExecutionContext) => {
    ctx.waitUntil(email.send({ to: "ops@example.com", subject: "Later", html: "<p>After the answer</p>" }));
    return new Response(null, { status: 202 });
  });
  return router;
}

const ada = { email: "ada@example.com", name: "Ada" };

describe("testRequest", () => {
  // auth.allow() with no options is the default: every account.
  afterEach(() => auth.allow());

  it("serves a path through the project worker's entry, at the test origin", async () => {
    const response = await testRequest(project(), "/api/hello/Ada");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ hello: "Ada" });
    expect(new URL("/x", TEST_ORIGIN).hostname).toBe("test-project.localhost");
  });

  it("a PlatformError becomes its JSON answer with its status", async () => {
    const response = await testRequest(project(), "/api/hello/%3Cb%3E");
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ error: { code: "invalid_input", message: "name must be letters." } });
  });

  it("{ user } signs the request in: auth.user() answers the user", async () => {
    const response = await testRequest(project(), "/", { user: ada });
    expect(await response.json()).toEqual({ user: ada });
  });

  it("without a user, auth.user() is null and auth.require() answers 401 JSON", async () => {
    expect(await (await testRequest(project(), "/")).json()).toEqual({ user: null });
    const denied = await testRequest(project(), "/api/private/welcome", { method: "POST" });
    expect(denied.status).toBe(401);
    expect(await denied.json()).toMatchObject({ error: { code: "unauthorized" } });
    expect(denied.outbox).toEqual([]);
  });

  it("a user whose domain auth.allow() refuses is not signed in", async () => {
    auth.allow({ domains: ["example.org"] });
    const response = await testRequest(project(), "/api/private/welcome", { method: "POST", user: ada });
    expect(response.status).toBe(401);
  });

  it("email.send from a handler lands in response.outbox", async () => {
    const response = await testRequest(project(), "/api/private/welcome", { method: "POST", user: ada });
    expect(response.status).toBe(200);
    expect(response.outbox).toEqual([{ to: ["ada@example.com"], subject: "Welcome, Ada", html: "<p>Hi</p>" }]);
    expect(response.calls).toEqual([
      expect.objectContaining({ plugin: "email-send", action: "send", answer: await response.json() }),
    ]);
  });

  it("work passed to ctx.waitUntil is finished before the response is handed back", async () => {
    const response = await testRequest(project(), "/api/later", { method: "POST" });
    expect(response.status).toBe(202);
    expect(response.outbox.map((m) => m.subject)).toEqual(["Later"]);
  });

  it("external requests never reach the platform's internal routes", async () => {
    const response = await testRequest(project(), "/__plugin/chatserver", { method: "POST", body: "{}" });
    expect(response.status).toBe(404);
  });

  it("{ env } gives the project its variables as env.NAME, beside the platform's bindings it cannot replace", async () => {
    const reader = {
      fetch: (_request: Request, env: Record<string, unknown>) =>
        Response.json({ key: env.API_KEY ?? null, project: env.PLATFORM_PROJECT_SLUG }),
    };
    const response = await testRequest(reader, "/", { env: { API_KEY: "k-123", PLATFORM_PROJECT_SLUG: "mine" } });
    expect(await response.json()).toEqual({ key: "k-123", project: "test-project" });
    expect(await (await testRequest(reader, "/")).json()).toEqual({ key: null, project: "test-project" });
  });

  it("refuses something that is not a project", async () => {
    await expect(testRequest({} as never, "/")).rejects.toMatchObject({ code: "invalid_input" });
  });
});
