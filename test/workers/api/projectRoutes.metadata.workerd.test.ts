/**
 * PUT /projects/:slug/metadata: the crons a push records, replacing the previous set; a refused
 * push (bad crons, a bad or oversized body, another user's project) keeps the previous ones.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { callApi, countRows, createProject, createUserWithToken, expectError } from "#test/support/workerd/index.ts";
import { jsonOfSize, projectRow, putCrons, streamOfText, userWithProject } from "#test/support/workerd/index.ts";

const KiB = 1024;

async function cronRows(slug: string): Promise<{ name: string; schedule: string }[]> {
  const { results } = await env.DB.prepare(
    "SELECT project_crons.name AS name, project_crons.schedule AS schedule FROM project_crons JOIN projects ON projects.id = project_crons.project_id WHERE projects.slug = ? ORDER BY name",
  )
    .bind(slug)
    .all<{ name: string; schedule: string }>();
  return results;
}

describe("PUT /projects/:slug/metadata", () => {
  it("records crons and replaces the previous set on the next push", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop");
    const first = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: {
        crons: [
          { name: "__workflow-recovery", schedule: "* * * * *" },
          { name: "hourly", schedule: "0 * * * *" },
        ],
      },
    });
    expect(first.status).toBe(200);
    const firstBody = (await first.json()) as { project: { slug: string }; crons: unknown };
    expect(firstBody.project.slug).toBe("shop");
    expect(JSON.stringify(firstBody)).not.toContain(row.worker_secret);
    expect(await cronRows("shop")).toEqual([
      { name: "__workflow-recovery", schedule: "* * * * *" },
      { name: "hourly", schedule: "0 * * * *" },
    ]);

    await putCrons(user.token, "shop", [{ name: "nightly", schedule: "30 3 * * 1-5" }]);
    expect(await cronRows("shop")).toEqual([{ name: "nightly", schedule: "30 3 * * 1-5" }]);

    const after = await projectRow("shop");
    expect(after.updated_at).toBeGreaterThanOrEqual(row.updated_at);
  });

  it.each([
    { name: "an empty list", body: { crons: [] } },
    { name: "no crons field", body: {} },
  ])("clears the crons on $name", async ({ body }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body });
    expect(response.status).toBe(200);
    expect(await cronRows("shop")).toEqual([]);
  });

  it("only touches the named project's crons", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await createProject(user.token, "blog");
    await putCrons(user.token, "blog", [{ name: "daily", schedule: "0 0 * * *" }]);
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    await putCrons(user.token, "shop", []);
    expect(await cronRows("blog")).toEqual([{ name: "daily", schedule: "0 0 * * *" }]);
  });

  const valid = { name: "ok", schedule: "* * * * *" };
  it.each([
    { name: "crons is an object", crons: { hourly: "0 * * * *" } },
    { name: "crons is a string", crons: "* * * * *" },
    { name: "crons is null", crons: null },
    {
      name: "more than 50 crons",
      crons: Array.from({ length: 51 }, (_, i) => ({ name: `c${i}`, schedule: "* * * * *" })),
    },
    { name: "entry is null", crons: [valid, null] },
    { name: "entry is a string", crons: ["* * * * *"] },
    { name: "name missing", crons: [{ schedule: "* * * * *" }] },
    { name: "name empty", crons: [{ name: "", schedule: "* * * * *" }] },
    { name: "name with a space", crons: [{ name: "my cron", schedule: "* * * * *" }] },
    { name: "name with a slash", crons: [{ name: "a/b", schedule: "* * * * *" }] },
    { name: "name with a dot", crons: [{ name: "a.b", schedule: "* * * * *" }] },
    { name: "name of 65 chars", crons: [{ name: "a".repeat(65), schedule: "* * * * *" }] },
    { name: "name is a number", crons: [{ name: 5, schedule: "* * * * *" }] },
    { name: "schedule missing", crons: [{ name: "x" }] },
    { name: "schedule empty", crons: [{ name: "x", schedule: "" }] },
    { name: "schedule with 4 fields", crons: [{ name: "x", schedule: "* * * *" }] },
    { name: "schedule with 6 fields", crons: [{ name: "x", schedule: "0 * * * * *" }] },
    { name: "schedule minute 60", crons: [{ name: "x", schedule: "60 * * * *" }] },
    { name: "schedule hour 24", crons: [{ name: "x", schedule: "0 24 * * *" }] },
    { name: "schedule month 13", crons: [{ name: "x", schedule: "0 0 1 13 *" }] },
    { name: "schedule of words", crons: [{ name: "x", schedule: "every five minutes" }] },
    { name: "schedule nickname", crons: [{ name: "x", schedule: "@hourly" }] },
    { name: "schedule is a number", crons: [{ name: "x", schedule: 5 }] },
    { name: "one bad among good ones", crons: [valid, { name: "bad", schedule: "nope * * * *" }] },
  ])("rejects $name with 400 and keeps the previous crons", async ({ crons }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const before = await projectRow("shop");
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons } });
    await expectError(response, 400, "invalid_input");
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
    expect((await projectRow("shop")).updated_at).toBe(before.updated_at);
  });

  it("rejects two crons with the same name with 400 and keeps the previous crons and updated_at", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const before = await projectRow("shop");
    const dup = [
      { name: "dup", schedule: "* * * * *" },
      { name: "dup", schedule: "0 * * * *" },
    ];
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons: dup } });
    await expectError(response, 400, "invalid_input");
    // The write is one transaction: nothing of it, not even the DELETE of the old crons, is kept.
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
    expect((await projectRow("shop")).updated_at).toBe(before.updated_at);
  });

  it("allows metadata bodies above the default 64 KiB limit (up to 256 KiB)", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const body = jsonOfSize({ crons: [{ name: "hourly", schedule: "0 * * * *" }] }, 200 * KiB);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body });
    expect(response.status).toBe(200);
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it("accepts exactly 50 crons and common schedule syntax", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const schedules = [
      "*/5 * * * *",
      "0 9-17 * * 1-5",
      "15,45 * * * *",
      "0 0 1 * *",
      "0 12 * JAN,JUL *",
      "0 0 * * SUN",
    ];
    const crons = Array.from({ length: 50 }, (_, i) => ({
      name: `c-${i}_x`,
      schedule: schedules[i % schedules.length]!,
    }));
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons } });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await countRows("project_crons")).toBe(50);
  });

  it("answers another user's project with 404 and writes nothing", async () => {
    const { user: ada } = await userWithProject("ada@example.com", "shop");
    await putCrons(ada.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const bob = await createUserWithToken("bob@example.com");
    const response = await callApi("PUT", "/projects/shop/metadata", {
      token: bob.token,
      body: { crons: [{ name: "evil", schedule: "* * * * *" }] },
    });
    await expectError(response, 404, "not_found");
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });

  it.each([
    { name: "malformed JSON", body: "{crons:", status: 400, code: "malformed_json" },
    { name: "a JSON array", body: "[]", status: 400, code: "malformed_json" },
    {
      name: "over 256 KiB with Content-Length",
      body: jsonOfSize({ crons: [] }, 256 * KiB + 1),
      headers: { "content-length": String(256 * KiB + 1) },
      status: 413,
      code: "payload_too_large",
    },
    {
      name: "over 256 KiB, streamed",
      body: streamOfText(jsonOfSize({ crons: [] }, 256 * KiB + 1)),
      status: 413,
      code: "payload_too_large",
    },
  ])("rejects $name and keeps the previous crons", async ({ body, headers, status, code }) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await putCrons(user.token, "shop", [{ name: "hourly", schedule: "0 * * * *" }]);
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body, headers });
    await expectError(response, status, code);
    expect(await cronRows("shop")).toEqual([{ name: "hourly", schedule: "0 * * * *" }]);
  });
});
