import { describe, expect, it } from "vitest";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { RESERVED_SLUGS } from "#src/workers/api/reservedSlugs.ts";
import { callApi, countRows, createUserWithToken, expectError, projectRow } from "#test/support/workerd/index.ts";
import { userWithProject } from "#test/support/workerd/index.ts";

/** `PUT <path>` at the dev API worker, as `platform dev` asks for its local project. */
const putLocal = (path: string, token: string, body: unknown) => callApi("PUT", path, { token, body, worker: devApi });

// `PUT /projects/:slug/local`: what `platform dev` asks of its local API worker (src/dev/routes/localProjectRoute.ts).
describe("PUT /projects/:slug/local (platform dev only)", () => {
  it("answers what the CLI binds into the local project worker", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    const response = await putLocal("/projects/alpha/local", user.token, { private: false });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      project: { id: row.id, slug: "alpha", scriptName: "proj-alpha", workerSecret: row.worker_secret, private: false },
    });
  });

  // The review's attack: the same route flipped an existing project's `private` flag.
  it.each([
    [false, true],
    [true, false],
  ])(
    "never changes whether a project is private (created private=%s, asked %s): 409, unchanged",
    async (was, asked) => {
      const user = await createUserWithToken("ada@example.com");
      const created = await putLocal("/projects/alpha/local", user.token, { private: was });
      expect(created.status).toBe(200);
      const flipped = await putLocal("/projects/alpha/local", user.token, { private: asked });
      const error = await expectError(flipped, 409, "conflict");
      expect(error.error.message).toBe(
        `Project "alpha" was created ${was ? "private" : "public"}, and whether a project is private is fixed when it is created.`,
      );
      expect((await projectRow("alpha")).private).toBe(was ? 1 : 0);
    },
  );

  it("answers another user's project like a missing one and changes nothing", async () => {
    await userWithProject("ada@example.com", "alpha");
    const { user: bob } = await userWithProject("bob@example.com", "beta");
    const response = await putLocal("/projects/alpha/local", bob.token, { private: true });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe('No project named "alpha" in your account.');
    expect((await projectRow("alpha")).private).toBe(0);
  });

  it("creates the local project on first use, private as asked", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await putLocal("/projects/beta/local", user.token, { private: true });
    expect(response.status).toBe(200);
    const { project } = (await response.json()) as { project: { slug: string; private: boolean } };
    expect(project).toMatchObject({ slug: "beta", private: true });
    expect((await projectRow("beta")).owner_id).toBe(user.id);
  });

  // The review's attack: `security`, `postmaster`, … were created through this route and mailed as the platform.
  it.each([...RESERVED_SLUGS, "Bad_Slug", "a--b"])(
    "creates no project named %s: the same slug rules as POST /projects",
    async (slug) => {
      const user = await createUserWithToken("ada@example.com");
      const refused = await putLocal(`/projects/${slug}/local`, user.token, { private: false });
      const error = await expectError(refused, 400, "invalid_input");
      expect(error.error.message).toMatch(RESERVED_SLUGS.has(slug) ? `"${slug}" is reserved` : /slug must be/);
      expect(await countRows("projects")).toBe(0);
    },
  );

  it("refuses a body without a boolean private", async () => {
    const { user } = await userWithProject("ada@example.com", "alpha");
    const response = await putLocal("/projects/alpha/local", user.token, { private: "yes" });
    const error = await expectError(response, 400, "invalid_input");
    expect(error.error.message).toBe("private must be true or false.");
  });

  it("does not exist in the deployed API worker", async () => {
    const { user } = await userWithProject("ada@example.com", "alpha");
    const response = await callApi("PUT", "/projects/alpha/local", { token: user.token, body: { private: true } });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe("No route for PUT /projects/alpha/local.");
    expect((await projectRow("alpha")).private).toBe(0);
  });
});
