import { describe, expect, it } from "vitest";
import { callApi, columnOf, expectError, userWithProject } from "#test/support/workerd/index.ts";

const checkout = { name: "checkout", steps: ["start", "ship"], maxAttempts: 3, stepTimeoutMS: 10_000 };

const workflowNames = (slug: string) =>
  columnOf<string>(
    "SELECT project_workflows.name AS name FROM project_workflows JOIN projects ON projects.id = project_workflows.project_id WHERE projects.slug = ? ORDER BY name",
    slug,
  );

describe("registered workflows (metadata → GET /projects/:slug)", () => {
  it("records the workflows a build reports and lists them with the project, replacing them on the next push", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const put = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: { workflows: [checkout, { ...checkout, name: "refund", steps: ["start"] }] },
    });
    expect(put.status).toBe(200);
    const got = (await (await callApi("GET", "/projects/shop", { token: user.token })).json()) as {
      project: { workflows: unknown };
    };
    expect(got.project.workflows).toEqual([checkout, { ...checkout, name: "refund", steps: ["start"] }]);

    await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { workflows: [checkout] } });
    expect(await workflowNames("shop")).toEqual(["checkout"]);
    await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: {} });
    expect(await workflowNames("shop")).toEqual([]);
  });

  it.each([
    { name: "workflows is an object", workflows: { checkout } },
    { name: "workflows is null", workflows: null },
    {
      name: "more than 100 workflows",
      workflows: Array.from({ length: 101 }, (_, i) => ({ ...checkout, name: `w${i}` })),
    },
    { name: "entry is null", workflows: [checkout, null] },
    { name: "name missing", workflows: [{ ...checkout, name: undefined }] },
    { name: "name with a space", workflows: [{ ...checkout, name: "my flow" }] },
    { name: "name of 65 chars", workflows: [{ ...checkout, name: "a".repeat(65) }] },
    { name: "steps missing", workflows: [{ ...checkout, steps: undefined }] },
    { name: "no steps", workflows: [{ ...checkout, steps: [] }] },
    { name: "a step name that is not a string", workflows: [{ ...checkout, steps: ["start", 5] }] },
    { name: "an empty step name", workflows: [{ ...checkout, steps: ["start", ""] }] },
    { name: "maxAttempts 0", workflows: [{ ...checkout, maxAttempts: 0 }] },
    { name: "maxAttempts 1.5", workflows: [{ ...checkout, maxAttempts: 1.5 }] },
    { name: "stepTimeoutMS missing", workflows: [{ ...checkout, stepTimeoutMS: undefined }] },
    { name: "two with the same name", workflows: [checkout, checkout] },
  ])("rejects $name with 400 and keeps what was registered", async ({ workflows }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { workflows: [checkout] } });
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { workflows } });
    await expectError(response, 400, "invalid_input");
    expect(await workflowNames("shop")).toEqual(["checkout"]);
  });
});
