import { describe, expect, it } from "vitest";
import devApi from "#src/dev/routes/devApiWorker.ts";
import {
  callApi,
  countRows,
  createUserWithToken,
  expectError,
  projectRow,
  userWithProject,
} from "#test/support/workerd/index.ts";

// `PUT /projects/:slug/local`: what `platform dev` asks of its local API worker (src/dev/routes/localProjectRoute.ts).
describe("PUT /projects/:slug/local (platform dev only)", () => {
  it("applies the privacy and answers what the CLI binds into the local project worker", async () => {
    const { user, row } = await userWithProject("ada@example.com", "alpha");
    const response = await callApi("PUT", "/projects/alpha/local", {
      token: user.token,
      body: { private: true },
      worker: devApi,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({
      project: { id: row.id, slug: "alpha", scriptName: "proj-alpha", workerSecret: row.worker_secret, private: true },
    });
    expect((await projectRow("alpha")).private).toBe(1);

    const back = await callApi("PUT", "/projects/alpha/local", {
      token: user.token,
      body: { private: false },
      worker: devApi,
    });
    expect(((await back.json()) as { project: { private: boolean } }).project.private).toBe(false);
    expect((await projectRow("alpha")).private).toBe(0);
  });

  it("answers another user's project like a missing one and changes nothing", async () => {
    await userWithProject("ada@example.com", "alpha");
    const { user: bob } = await userWithProject("bob@example.com", "beta");
    const response = await callApi("PUT", "/projects/alpha/local", {
      token: bob.token,
      body: { private: true },
      worker: devApi,
    });
    const error = await expectError(response, 404, "not_found");
    expect(error.error.message).toBe('No project named "alpha" in your account.');
    expect((await projectRow("alpha")).private).toBe(0);
  });

  it("creates the local project on first use; a folder named like a role slug still runs, a platform route name does not", async () => {
    const user = await createUserWithToken("ada@example.com");
    const response = await callApi("PUT", "/projects/support/local", {
      token: user.token,
      body: { private: true },
      worker: devApi,
    });
    expect(response.status).toBe(200);
    const { project } = (await response.json()) as { project: { slug: string; private: boolean } };
    expect(project).toMatchObject({ slug: "support", private: true });
    expect((await projectRow("support")).owner_id).toBe(user.id);

    for (const slug of ["api", "Bad_Slug"]) {
      const refused = await callApi("PUT", `/projects/${slug}/local`, {
        token: user.token,
        body: { private: false },
        worker: devApi,
      });
      await expectError(refused, 400, "invalid_input");
    }
    expect(await countRows("projects")).toBe(1);
  });

  it("refuses a body without a boolean private", async () => {
    const { user } = await userWithProject("ada@example.com", "alpha");
    const response = await callApi("PUT", "/projects/alpha/local", {
      token: user.token,
      body: { private: "yes" },
      worker: devApi,
    });
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
