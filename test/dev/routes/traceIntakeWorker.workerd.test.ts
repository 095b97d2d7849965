import { createExecutionContext, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import intake from "#src/dev/routes/traceIntakeWorker.ts";
import { scriptTraceToken, TRACE_SCRIPT_HEADER } from "#src/dev/routes/scriptTraceToken.ts";
import api from "#src/workers/api/index.ts";

/** The intake's key for this start of `platform up`; each forwarder holds the token it makes for its script. */
const KEY = "a".repeat(64);
const intakeEnv = { ...(env as object), TRACE_INTAKE_KEY: KEY } as never;

async function userWithProject(email: string, slug: string) {
  const call = (path: string, token: string, body: unknown) =>
    api.fetch(
      new Request(`https://api.test${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }),
      env as never,
      createExecutionContext(),
    );
  const { token } = (await (await call("/admin/users", "test-admin-token", { email })).json()) as { token: string };
  const { project } = (await (await call("/projects", token, { slug })).json()) as { project: { scriptName: string } };
  return { token, script: project.scriptName, slug };
}

async function logMessages(project: { token: string; slug: string }): Promise<string[]> {
  const response = await api.fetch(
    new Request(`https://api.test/projects/${project.slug}/logs`, {
      headers: { authorization: `Bearer ${project.token}` },
    }),
    env as never,
    createExecutionContext(),
  );
  const { entries } = (await response.json()) as { entries: { message: string }[] };
  return entries.map((entry) => entry.message);
}

/** One invocation's trace as the forwarder posts it (workerd's TraceItem as JSON). */
const traceSaying = (message: string, scriptName: string | null = null) => ({
  scriptName,
  event: null,
  eventTimestamp: Date.UTC(2026, 10, 25),
  logs: [{ timestamp: Date.UTC(2026, 10, 25), level: "log", message: [message] }],
  exceptions: [],
  diagnosticsChannelEvents: [],
  outcome: "ok",
  wallTime: 0,
  cpuTime: 0,
});

function post(headers: Record<string, string>, body: unknown, method = "POST") {
  return intake.fetch(
    new Request("http://trace-intake/", {
      method,
      headers: { "content-type": "application/json", ...headers },
      ...(method === "POST" ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    }),
    intakeEnv,
  );
}

const as = async (script: string, token?: string) => ({
  [TRACE_SCRIPT_HEADER]: script,
  authorization: `Bearer ${token ?? (await scriptTraceToken(KEY, script))}`,
});

describe("platform up's trace intake: each project's traces into its own log, and nobody else's", () => {
  it("records a forwarder's traces in its project's log, as the Tail Worker handler does", async () => {
    const shop = await userWithProject("ada@example.com", "shop");
    expect((await post(await as(shop.script), [traceSaying("hello from shop")])).status).toBe(204);
    expect(await logMessages(shop)).toEqual(["hello from shop"]);
  });

  it("refuses every attempt of one project to write another's log (each attack replayed)", async () => {
    const victim = await userWithProject("ada@example.com", "victim");
    const tenant = await userWithProject("eve@example.com", "tenant");
    const tenantToken = await scriptTraceToken(KEY, tenant.script);
    const attacks: [string, Record<string, string>][] = [
      ["no token at all", { [TRACE_SCRIPT_HEADER]: victim.script }],
      ["its own token, naming the victim's script", await as(victim.script, tenantToken)],
      [
        "a token made with a key of its own",
        await as(victim.script, await scriptTraceToken("b".repeat(64), victim.script)),
      ],
      ["a token, no script named", { authorization: `Bearer ${tenantToken}` }],
    ];
    for (const [, headers] of attacks) {
      const answer = await post(headers, [traceSaying("forged line")]);
      expect(answer.status).toBe(403);
      expect(await answer.json()).toEqual({
        error: { code: "forbidden", message: "Only a project's own tail forwarder hands over its traces." },
      });
    }
    // Its own token, with traces that name the victim's script: they land in its own log, the only one it may write.
    expect((await post(await as(tenant.script), [traceSaying("claims to be the victim", victim.script)])).status).toBe(
      204,
    );
    expect(await logMessages(victim)).toEqual([]);
    expect(await logMessages(tenant)).toEqual(["claims to be the victim"]);
  });

  it.each([
    ["a body that is not JSON", "not json", 400],
    ["a body that is not a list of traces", { logs: [] }, 400],
    ["a trace without its lists", [{ scriptName: null }], 400],
  ])("refuses %s", async (_case, body, status) => {
    const shop = await userWithProject("ada@example.com", "shop");
    const answer = await post(await as(shop.script), body);
    expect(answer.status).toBe(status);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toBe(
      "The body must be a JSON list of traces.",
    );
  });

  it("answers 404 to anything but POST", async () => {
    const answer = await post({}, null, "GET");
    expect(answer.status).toBe(404);
    expect(await answer.json()).toEqual({
      error: { code: "not_found", message: "The trace intake answers POST only." },
    });
  });
});
