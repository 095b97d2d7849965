import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { apiHarness, callApi, expectError, putCrons, userWithProject } from "#test/support/workerd/index.ts";

// The project's sign-in settings travel from its metadata (`auth.allow(...)`)
// through the API worker into `project_auth`, where the login worker reads them.

async function authRow(slug: string) {
  return env.DB.prepare(
    "SELECT project_auth.domains AS domains, project_auth.session_max_age AS session_max_age FROM project_auth JOIN projects ON projects.id = project_auth.project_id WHERE projects.slug = ?",
  )
    .bind(slug)
    .first<{ domains: string | null; session_max_age: number }>();
}

describe("PUT /projects/:slug/metadata: auth", () => {
  it("stores domains (lower-cased, deduplicated) and sessionMaxAge, and answers with them", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const response = await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: { crons: [], auth: { domains: ["Example.com", "example.org", "example.com"], sessionMaxAge: 3600 } },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(((await response.json()) as { auth: unknown }).auth).toEqual({
      domains: ["example.com", "example.org"],
      sessionMaxAge: 3600,
    });
    expect(await authRow("shop")).toEqual({ domains: '["example.com","example.org"]', session_max_age: 3600 });
  });

  it("stores no domain list (every account) and the 30-day default when auth has neither", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { auth: {} } });
    expect(response.status).toBe(200);
    expect(await authRow("shop")).toEqual({ domains: null, session_max_age: 2_592_000 });
  });

  it("replaces the settings on the next push and removes them when auth is gone", async () => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: { auth: { domains: ["example.com"] } },
    });
    await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: { auth: { domains: ["example.org"] } },
    });
    expect((await authRow("shop"))?.domains).toBe('["example.org"]');
    await putCrons(user.token, "shop", []);
    expect(await authRow("shop")).toBeNull();
  });

  it.each<[string, unknown]>([
    ["auth that is not an object", "yes"],
    ["auth that is an array", ["example.com"]],
    ["domains that is a string", { domains: "example.com" }],
    ["an empty domain list", { domains: [] }],
    ["a domain with a scheme", { domains: ["https://example.com"] }],
    ["a domain with an @", { domains: ["@example.com"] }],
    ["a bare word", { domains: ["localhost"] }],
    ["a wildcard", { domains: ["*.example.com"] }],
    ["a non-string domain", { domains: [42] }],
    ["a fractional sessionMaxAge", { sessionMaxAge: 1.5 }],
    ["a zero sessionMaxAge", { sessionMaxAge: 0 }],
    ["a sessionMaxAge over 400 days", { sessionMaxAge: 401 * 86400 }],
    ["a string sessionMaxAge", { sessionMaxAge: "3600" }],
  ])("refuses %s with 400 and changes nothing (crons included)", async (_name, auth) => {
    const { user } = await userWithProject("ada@example.com", "shop");
    await callApi("PUT", "/projects/shop/metadata", {
      token: user.token,
      body: { crons: [{ name: "hourly", schedule: "0 * * * *" }], auth: { domains: ["example.com"] } },
    });
    const response = await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { crons: [], auth } });
    await expectError(response, 400, "invalid_input");
    expect((await authRow("shop"))?.domains).toBe('["example.com"]');
    const crons = await env.DB.prepare("SELECT COUNT(*) AS n FROM project_crons").first<{ n: number }>();
    expect(crons!.n).toBe(1);
  });

  it("removes the settings with the project", async () => {
    const { user, row } = await userWithProject("ada@example.com", "shop");
    await callApi("PUT", "/projects/shop/metadata", { token: user.token, body: { auth: {} } });
    await env.DB.prepare("PRAGMA foreign_keys = ON").run();
    await env.DB.prepare("DELETE FROM projects WHERE id = ?").bind(row.id).run();
    const left = await env.DB.prepare("SELECT COUNT(*) AS n FROM project_auth").first<{ n: number }>();
    expect(left!.n).toBe(0);
  });
});

describe("PUT /projects/:slug/deployment: auth", () => {
  function fakeCloudflare() {
    const uploads: { bindings: { name: string; type: string; text?: string }[] }[] = [];
    const fetcher = {
      async fetch(input: RequestInfo, init?: RequestInit) {
        const form = await new Request(input, init).formData();
        uploads.push(JSON.parse(await (form.get("metadata") as File).text()));
        return Response.json({ success: true, errors: [] });
      },
    };
    return { uploads, fetcher: fetcher as unknown as Fetcher };
  }

  /** ada's project "shop", and an API that uploads to a fake Cloudflare (its env given `extra`). */
  async function deployingShop(extra: Record<string, unknown> = {}) {
    const { user } = await userWithProject("ada@example.com", "shop");
    const cloudflare = fakeCloudflare();
    const { env: deployEnv } = apiHarness({
      env: {
        CLOUDFLARE_ACCOUNT_ID: "acc",
        DISPATCH_NAMESPACE: "ns",
        CLOUDFLARE_API_TOKEN: "cf",
        CLOUDFLARE_API: cloudflare.fetcher,
        ...extra,
      },
    });
    return { user, cloudflare, deployEnv };
  }

  it("records the settings and gives the project PLATFORM_LOGIN_URL when the platform has a login worker", async () => {
    const { user, cloudflare, deployEnv } = await deployingShop({ LOGIN_PUBLIC_URL: "https://login.example.test" });
    const response = await callApi("PUT", "/projects/shop/deployment", {
      token: user.token,
      env: deployEnv,
      body: { bundle: "export default {}", metadata: { auth: { domains: ["example.com"], sessionMaxAge: 600 } } },
    });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(await authRow("shop")).toEqual({ domains: '["example.com"]', session_max_age: 600 });
    expect(cloudflare.uploads[0]!.bindings).toContainEqual({
      type: "plain_text",
      name: "PLATFORM_LOGIN_URL",
      text: "https://login.example.test",
    });

    const again = await callApi("PUT", "/projects/shop/deployment", {
      token: user.token,
      env: deployEnv,
      body: { bundle: "export default {}", metadata: {} },
    });
    expect(again.status).toBe(200);
    expect(await authRow("shop")).toBeNull();
  });

  it("refuses invalid auth before uploading anything", async () => {
    const { user, cloudflare, deployEnv } = await deployingShop();
    const response = await callApi("PUT", "/projects/shop/deployment", {
      token: user.token,
      env: deployEnv,
      body: { bundle: "export default {}", metadata: { auth: { domains: ["not a domain"] } } },
    });
    await expectError(response, 400, "invalid_input");
    expect(cloudflare.uploads).toHaveLength(0);
    expect(await authRow("shop")).toBeNull();
  });
});
