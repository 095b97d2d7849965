import { createExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import emailPlugin from "#src/plugins/email-send/index.ts";
import type { EmailPluginEnv } from "#src/plugins/email-send/env.ts";
import { ACCOUNT_RATE_LIMITS } from "#src/objects/accountRateLimits.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  createProject,
  createUserWithToken,
  projectRow,
  signedRequest,
  emailPluginWithFake,
} from "#test/support/workerd/index.ts";

const API_KEY = "re_test_0123456789";
const message = { to: "someone@example.com", subject: "Hello", html: "<p>Hi</p>" };

function emailEnv() {
  return emailPluginWithFake(API_KEY);
}

async function accountWithProjects(email: string, count: number): Promise<ProjectRow[]> {
  const user = await createUserWithToken(email);
  const rows: ProjectRow[] = [];
  for (let i = 0; i < count; i++) {
    const slug = `${email.split("@")[0]}-${i}`;
    await createProject(user.token, slug);
    rows.push(await projectRow(slug));
  }
  return rows;
}

async function send(env: EmailPluginEnv, project: ProjectRow): Promise<Response> {
  return emailPlugin.fetch(
    await signedRequest({ project, path: "/send", body: JSON.stringify(message) }),
    env,
    createExecutionContext(),
  );
}

describe("email sends are counted per account too (10 per 60 s across all its projects)", () => {
  it("an account with ten projects bursts 3 sends through each: 10 go out, 20 get 429 naming the account's limit", async () => {
    const { fake, env } = emailEnv();
    const projects = await accountWithProjects("ada@example.com", 10);
    // Within every project's own limit (3 per 60 s): only the account limit can refuse.
    const responses = await Promise.all(projects.flatMap((p) => [send(env, p), send(env, p), send(env, p)]));

    expect(responses.filter((r) => r.status === 200)).toHaveLength(ACCOUNT_RATE_LIMITS.email.limit);
    const refused = responses.filter((r) => r.status === 429);
    expect(refused).toHaveLength(20);
    expect(fake.sent).toHaveLength(10);
    for (const response of refused) {
      const retryAfter = Number(response.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      const { error } = (await response.json()) as {
        error: { code: string; message: string; details: Record<string, unknown> };
      };
      expect(error.code).toBe("rate_limited");
      expect(error.message).toBe(
        `Account rate limit reached: the account that owns this project may make 10 email sends per 60 seconds across all its projects together (the account's limit, not this project's). Retry in ${retryAfter} s.`,
      );
      expect(error.details).toEqual({
        retryAfterSeconds: retryAfter,
        bucket: "email",
        scope: "account",
        limit: 10,
        windowSeconds: 60,
      });
    }

    // Another account has its own count.
    const [other] = await accountWithProjects("bob@example.com", 1);
    expect((await send(env, other!)).status).toBe(200);
  });

  it("a project's own refusal takes nothing from the account: the account's 10th send still goes out", async () => {
    const { env } = emailEnv();
    const [a, b, c, d] = await accountWithProjects("ada@example.com", 4);
    for (let i = 0; i < 3; i++) expect((await send(env, a!)).status).toBe(200);
    const refused = await send(env, a!);
    expect(refused.status).toBe(429);
    const { error } = (await refused.json()) as { error: { message: string; details: Record<string, unknown> } };
    // A send takes from the project's `actions` and `email` (3 per 60 s each): either may be the one named.
    expect(error.message).toMatch(
      /^Rate limit reached: a project may make 3 (email sends|plugin actions) per 60 seconds\./,
    );
    expect(error.details).toMatchObject({ scope: "project" });
    for (const project of [b, c]) for (let i = 0; i < 3; i++) expect((await send(env, project!)).status).toBe(200);
    expect((await send(env, d!)).status).toBe(200);
    const eleventh = await send(env, d!);
    expect(eleventh.status).toBe(429);
    expect(((await eleventh.json()) as { error: { details: unknown } }).error.details).toMatchObject({
      scope: "account",
      limit: 10,
    });
  });
});
