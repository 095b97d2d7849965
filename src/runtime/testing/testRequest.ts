import { PlatformError } from "../../core/errors.ts";
import { siteFor } from "../auth/authSite.ts";
import { mintSession, sessionStarted, type AuthUser } from "../auth/session.ts";
import { sessionRegistryFor } from "../auth/sessionRegistry.ts";
import { createPlatformWorker, type ProjectExport } from "../entry/createPlatformWorker.ts";
import { useTestWorkflowBackend } from "./testBackend.ts";
import { createRecording, type PluginRecording } from "./testRecords.ts";
import { inTestScope, testEnv, testEnvWith } from "./testScope.ts";
import { testExecutionContext } from "./testExecutionContext.ts";
import { TEST_ORIGIN } from "./testOrigin.ts";

/**
 * @example
 * const init: TestRequestInit = { method: "POST", body: JSON.stringify({ name: "Ada" }), user: { email: "ada@example.com", name: "Ada" } };
 * const response = await testRequest(project, "/api/greet", init);
 */
export interface TestRequestInit extends RequestInit {
  /**
   * Signs the request in as this user: it carries a session cookie the
   * platform sealed for the project, so `auth.user(request)` answers the user
   * and `auth.require()` lets it through (unless `auth.allow({ domains })`
   * refuses the email's domain, as it would at sign-in).
   */
  user?: AuthUser;
  /** The project's variables and secrets, as `.dev.vars` would give them: `env.NAME` in its `fetch` (and `ctx.env.NAME` in the steps of runs it starts). */
  env?: Readonly<Record<string, string>>;
}

/**
 * The project's answer, with what its code did while it was handled (`waitUntil` work included): the
 * emails it sent (`outbox`), every plugin call (`calls`) and the workflow runs it started (`runs`).
 * @example
 * const response: TestResponse = await testRequest(project, "/signup", { method: "POST" });
 * expect(response.outbox).toHaveLength(1);
 */
export interface TestResponse extends Response, PluginRecording {}

/**
 * A project's default export as `platform dev` serves it: an itty-router `Router` or any `{ fetch }`.
 * @example
 * import project from "../src/index.ts";
 * const tested: TestedProject = project;
 * await testRequest(tested, "/");
 */
export interface TestedProject {
  // biome-ignore lint/suspicious/noExplicitAny: a Router's fetch takes its own argument types
  fetch(request: Request, ...rest: any[]): unknown;
}

function sessionCookieValue(setCookie: string): string {
  return setCookie.slice(0, setCookie.indexOf(";"));
}

/**
 * Sends one request to a project in this process, through
 * the same entry a project worker has (the platform's routes first, a
 * PlatformError becomes its JSON answer), with the test kit's environment:
 * the plugin fakes answer and record (`response.outbox`, `response.calls`),
 * a run `workflow.start` starts is driven as `testWorkflow` drives one
 * (`response.runs`), and `{ user }` signs the request in. A path (`"/api/hello"`) is resolved
 * against {@link TEST_ORIGIN}. Work passed to `ctx.waitUntil` is awaited
 * before the response is handed back.
 * @example
 * import project from "../src/index.ts";
 * const response = await testRequest(project, "/me", { user: { email: "ada@example.com", name: "Ada" } });
 * expect(await response.json()).toMatchObject({ email: "ada@example.com" });
 */
export async function testRequest(
  project: TestedProject,
  input: string | URL | Request,
  init: TestRequestInit = {},
): Promise<TestResponse> {
  if (!project || typeof project.fetch !== "function") {
    throw new PlatformError(
      "invalid_input",
      "testRequest takes the project's default export (an itty-router Router or an object with a fetch method).",
    );
  }
  const { user, env: vars, ...requestInit } = init;
  const url = typeof input === "string" && input.startsWith("/") ? new URL(input, TEST_ORIGIN) : input;
  let request = new Request(url as Request | URL | string, requestInit);
  if (user) {
    // Signed in as a sign-in would: a session minted and recorded (in this process, as under `platform dev --node`).
    const site = siteFor(request, testEnv());
    const session = await mintSession(site, user);
    await sessionRegistryFor(site).start(session.grant);
    sessionStarted(site, session);
    const cookie = sessionCookieValue(session.cookie);
    const headers = new Headers(request.headers);
    headers.set("cookie", [headers.get("cookie"), cookie].filter(Boolean).join("; "));
    request = new Request(request, { headers });
  }
  useTestWorkflowBackend();
  const worker = createPlatformWorker(project as ProjectExport);
  const recording = createRecording();
  const env = testEnvWith(vars);
  const response = await inTestScope(
    recording,
    async () => {
      const { ctx, settled } = testExecutionContext();
      const answer = await worker.fetch!(request as Request<unknown, IncomingRequestCfProperties>, env, ctx);
      await settled();
      return answer;
    },
    vars,
  );
  return Object.assign(response, { outbox: recording.outbox, calls: recording.calls, runs: recording.runs });
}
