/**
 * GET /projects and GET /projects/:slug: only the caller's own projects, without secrets; another
 * user's project answers exactly like a missing one.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callApi, createProject, createUserWithToken, expectError, putCrons } from "#test/support/workerd/index.ts";
import { userWithProject } from "#test/support/workerd/index.ts";

describe("GET /projects", () => {
  it("lists only the caller's own projects, sorted by slug, without secrets", async () => {
    const ada = await createUserWithToken("ada@example.com");
    const bob = await createUserWithToken("bob@example.com");
    const carol = await createUserWithToken("carol@example.com");
    await createProject(ada.token, "zeta");
    await createProject(bob.token, "bobs");
    await createProject(ada.token, "alpha", { private: true });

    const expectations = [
      { user: ada, slugs: ["alpha", "zeta"] },
      { user: bob, slugs: ["bobs"] },
      { user: carol, slugs: [] },
    ];
    for (const { user, slugs } of expectations) {
      const response = await callApi("GET", "/projects", { token: user.token });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text.toLowerCase()).not.toContain("secret");
      const { projects } = JSON.parse(text) as { projects: { slug: string; private: boolean }[] };
      expect(projects.map((p) => p.slug)).toEqual(slugs);
    }
    const { results } = await env.DB.prepare("SELECT worker_secret FROM projects").all<{ worker_secret: string }>();
    const listed = await (await callApi("GET", "/projects", { token: ada.token })).text();
    for (const r of results) expect(listed).not.toContain(r.worker_secret);
  });
});

describe("GET /projects/:slug", () => {
  it("returns the caller's project with its crons and no secret", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop", { private: true });
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("GET", "/projects/shop", { token: user.token });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(row.worker_secret);
    const { project } = JSON.parse(text) as { project: Record<string, unknown> };
    expect(project).toMatchObject({ id: row.id, slug: "shop", scriptName: "proj-shop", private: true });
    expect(project.crons).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it("answers another user's project exactly like a missing one (404)", async () => {
    await userWithProject("ada@example.com", "shop");
    const bob = await createUserWithToken("bob@example.com");

    const foreign = await callApi("GET", "/projects/shop", { token: bob.token });
    const foreignBody = await expectError(foreign, 404, "not_found");
    const missing = await callApi("GET", "/projects/nope", { token: bob.token });
    const missingBody = await expectError(missing, 404, "not_found");

    expect(foreignBody.error.message.replace("shop", "<slug>")).toBe(
      missingBody.error.message.replace("nope", "<slug>"),
    );
    expect(foreignBody.error.message).not.toMatch(/ada|owner|another|forbidden/i);
  });
});
