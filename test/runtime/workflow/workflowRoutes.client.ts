/**
 * The platform's calls to the project of workflowRoutes.fixture.ts: requests carrying an
 * `internal` token signed for exactly that request with the project's worker secret.
 */
import { createExecutionContext } from "cloudflare:test";
import { expect, vi } from "vitest";
import { INTERNAL_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import type { WorkflowRunView } from "#src/engine/execution/describeRun.ts";
import { PROGRESS } from "#test/support/workflow/index.ts";
import { ORIGIN, project, worker } from "./workflowRoutes.fixture.ts";

export interface Call {
  body?: string;
  /** "valid" (default): signed for exactly this request with the project's secret; null: no header; any other string is sent as is. */
  token?: string | null;
}

/** A request to the wrapped project worker, as the platform sends it. */
export async function call(method: string, path: string, options: Call = {}): Promise<Response> {
  const body = options.body ?? null;
  const token =
    options.token === undefined || options.token === "valid"
      ? await signRequestToken(
          "internal",
          { method, pathAndQuery: path, body },
          { projectId: project.env.PLATFORM_PROJECT_ID!, secret: project.env.PLATFORM_WORKER_SECRET! },
        )
      : options.token;
  const headers = new Headers();
  if (token !== null) headers.set(INTERNAL_HEADER, token);
  if (body !== null) headers.set("content-type", "application/json");
  const request = new Request(ORIGIN + path, { method, headers, body });
  return fetchWorker(request);
}

/** The wrapped worker answering a request with the project's env. */
export function fetchWorker(request: Request): Promise<Response> {
  return worker.fetch!(
    request as Request<unknown, IncomingRequestCfProperties>,
    project.env,
    createExecutionContext(),
  ) as Promise<Response>;
}

export const start = (body: unknown, options: Call = {}) =>
  call("POST", "/__workflow/start", { body: typeof body === "string" ? body : JSON.stringify(body), ...options });

export async function startRun(
  name: string,
  data: unknown,
  id?: string,
): Promise<{ runId: string; workflowId: string; name: string; created: boolean }> {
  const response = await start(id === undefined ? { name, data } : { name, data, id });
  expect(response.status, await response.clone().text()).toBe(201);
  return response.json();
}

export async function getRun(runId: string): Promise<WorkflowRunView> {
  const response = await call("GET", `/__workflow/runs/${encodeURIComponent(runId)}`);
  expect(response.status, await response.clone().text()).toBe(200);
  return response.json();
}

/** Polls the run's route (PROGRESS) until it is no longer running. */
export async function waitUntilTerminal(runId: string): Promise<WorkflowRunView> {
  let view!: WorkflowRunView;
  await vi.waitFor(async () => {
    view = await getRun(runId);
    expect(view.status).not.toBe("running");
  }, PROGRESS);
  return view;
}

export const types = (view: WorkflowRunView) => view.events.map((e) => e.type);
