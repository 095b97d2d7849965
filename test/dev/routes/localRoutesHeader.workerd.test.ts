import { describe, expect, it } from "vitest";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { callApi, userWithProject } from "#test/support/workerd/index.ts";

// The console shows its Outbox (and requests /projects/:slug/outbox) only when the API names the route:
// platform dev's API does, the deployed one (also platform up's) does not.
describe("X-Platform-Local-Routes on GET /cli/whoami", () => {
  it.each([
    ["platform dev's API", devApi, "outbox"],
    ["the deployed API (platform up's)", undefined, null],
  ])("%s answers %s", async (_, worker, header) => {
    const { user } = await userWithProject(`whoami-${header ?? "none"}@example.com`, `whoami-${header ?? "none"}`);
    const response = await callApi("GET", "/cli/whoami", { token: user.token, ...(worker ? { worker } : {}) });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-platform-local-routes")).toBe(header);
    expect(await response.json()).toEqual({ email: user.email });
  });

  it("names nothing on a refusal or on another route", async () => {
    const refused = await callApi("GET", "/cli/whoami", { token: "plt_nope", worker: devApi });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("x-platform-local-routes")).toBeNull();
    const { user } = await userWithProject("routes-other@example.com", "routes-other");
    const projects = await callApi("GET", "/projects", { token: user.token, worker: devApi });
    expect(projects.status).toBe(200);
    expect(projects.headers.get("x-platform-local-routes")).toBeNull();
  });
});
