import { describe, expect, it } from "vitest";
import devApi from "#src/dev/routes/devApiWorker.ts";
import { DEFAULT_MAX_PROJECTS_PER_ACCOUNT } from "#src/workers/api/projectsPerAccount.ts";
import {
  apiHarness,
  callApi,
  columnOf,
  createProject,
  createUserWithToken,
  expectError,
} from "#test/support/workerd/index.ts";

const ownedBy = (userId: number) =>
  columnOf<string>("SELECT slug FROM projects WHERE owner_id = ? ORDER BY slug", userId);

const slugs = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, "0")}`);

describe("projects per account (MAX_PROJECTS_PER_ACCOUNT, default 20)", () => {
  it("the default is 20: the 21st POST /projects is 403 quota_exceeded naming the cap, and creates nothing", async () => {
    expect(DEFAULT_MAX_PROJECTS_PER_ACCOUNT).toBe(20);
    const ada = await createUserWithToken("ada@example.com");
    for (const slug of slugs("ada", 20)) await createProject(ada.token, slug);

    const refused = await callApi("POST", "/projects", { token: ada.token, body: { slug: "ada-one-more" } });
    const body = await expectError(refused, 403, "quota_exceeded");
    expect(body.error.message).toBe(
      'Your account already has 20 projects, and an account may have at most 20 on this platform (MAX_PROJECTS_PER_ACCOUNT), so "ada-one-more" was not created. Push to one of your projects instead (platform push --slug <slug>), or ask the platform\'s operator to raise the limit.',
    );
    expect((body.error as { details?: unknown }).details).toEqual({ limit: 20, projects: 20 });
    expect(await ownedBy(ada.id)).toEqual(slugs("ada", 20));

    // Another account is not affected.
    const bob = await createUserWithToken("bob@example.com");
    expect((await createProject(bob.token, "bob-first")).slug).toBe("bob-first");
  });

  it("the API worker's var sets the cap; concurrent creations cannot pass it together", async () => {
    const harness = apiHarness({ env: { MAX_PROJECTS_PER_ACCOUNT: "3" } });
    const ada = await createUserWithToken("ada@example.com");
    const responses = await Promise.all(
      slugs("race", 8).map((slug) =>
        callApi("POST", "/projects", { token: ada.token, body: { slug }, env: harness.env }),
      ),
    );
    expect(responses.map((r) => r.status).sort()).toEqual([201, 201, 201, 403, 403, 403, 403, 403]);
    expect(await ownedBy(ada.id)).toHaveLength(3);
    const refused = responses.find((r) => r.status === 403)!;
    expect((await expectError(refused, 403, "quota_exceeded")).error.message).toMatch(
      /^Your account already has 3 projects, and an account may have at most 3 on this platform/,
    );
  });

  it("a slug that is taken is still 409 conflict at the cap", async () => {
    const harness = apiHarness({ env: { MAX_PROJECTS_PER_ACCOUNT: "1" } });
    const ada = await createUserWithToken("ada@example.com");
    const bob = await createUserWithToken("bob@example.com");
    await createProject(bob.token, "taken");
    await callApi("POST", "/projects", { token: ada.token, body: { slug: "mine" }, env: harness.env });
    await expectError(
      await callApi("POST", "/projects", { token: ada.token, body: { slug: "taken" }, env: harness.env }),
      409,
      "conflict",
    );
  });

  it.each(["0", "-1", "twenty", "2.5", "1e3"])(
    "MAX_PROJECTS_PER_ACCOUNT=%j is a misconfiguration: 500 naming the var, nothing created",
    async (value) => {
      const harness = apiHarness({ env: { MAX_PROJECTS_PER_ACCOUNT: value } });
      const ada = await createUserWithToken("ada@example.com");
      const body = await expectError(
        await callApi("POST", "/projects", { token: ada.token, body: { slug: "first" }, env: harness.env }),
        500,
        "internal",
      );
      expect(body.error.message).toContain(`MAX_PROJECTS_PER_ACCOUNT is "${value}"`);
      expect(await ownedBy(ada.id)).toEqual([]);
    },
  );

  it("platform dev's first use of a folder (PUT /projects/:slug/local) obeys the same cap", async () => {
    const harness = apiHarness({ env: { MAX_PROJECTS_PER_ACCOUNT: "1" } });
    const ada = await createUserWithToken("ada@example.com");
    const link = (slug: string) =>
      callApi("PUT", `/projects/${slug}/local`, {
        token: ada.token,
        body: { private: false },
        env: harness.env,
        worker: devApi,
      });
    expect((await link("first")).status).toBe(200);
    // The folder already linked keeps working at the cap.
    expect((await link("first")).status).toBe(200);
    await expectError(await link("second"), 403, "quota_exceeded");
    expect(await ownedBy(ada.id)).toEqual(["first"]);
  });
});
