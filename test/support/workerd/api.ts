/**
 * Shared helpers for the workerd tests of the API worker, the gateway and the
 * runtime entry. Everything here goes through the workers' real default
 * exports; only the dispatch namespace and the queue producer are wrapped so a
 * test can see what reached a project worker and what was enqueued.
 */
import { createExecutionContext, env } from "cloudflare:test";
import { expect } from "vitest";
import api from "#src/workers/api/index.ts";
import type { ApiEnv, WorkflowExecuteMessage } from "#src/workers/api/env.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";

export const ADMIN_TOKEN = "test-admin-token";
export const API_ORIGIN = "https://api.test";

// ---------------------------------------------------------------------------
// Fake dispatch namespace
// ---------------------------------------------------------------------------

/** One request that reached a project worker through the fake dispatcher. */
export interface DispatchedCall {
  scriptName: string;
  request: Request;
  url: URL;
  method: string;
  headers: Headers;
  body: string;
}

export type ProjectWorkerHandler = (request: Request, scriptName: string) => Response | Promise<Response>;

export interface FakeDispatcher {
  /** Pass as `DISPATCHER` in a worker's env. */
  namespace: { get(name: string): Fetcher };
  /** Every request any project worker received, in order. */
  calls: DispatchedCall[];
  /** Script names `get` was asked for. */
  lookups: string[];
}

/**
 * A stand-in for a Workers for Platforms dispatch namespace. `handler` answers
 * for every script (default: 200 "ok from <script>"); `deployed` restricts
 * which scripts exist (an unknown one throws from `get`, like the real one).
 */
export function fakeDispatcher(handler?: ProjectWorkerHandler, options: { deployed?: string[] } = {}): FakeDispatcher {
  const calls: DispatchedCall[] = [];
  const lookups: string[] = [];
  const namespace = {
    get(name: string): Fetcher {
      lookups.push(name);
      if (options.deployed && !options.deployed.includes(name)) throw new Error(`Worker not found: ${name}`);
      const fetcher = {
        async fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
          const request = new Request(input, init);
          const body = await request.clone().text();
          calls.push({
            scriptName: name,
            request,
            url: new URL(request.url),
            method: request.method,
            headers: new Headers(request.headers),
            body,
          });
          return handler ? handler(request, name) : new Response(`ok from ${name}`);
        },
      };
      return fetcher as unknown as Fetcher;
    },
  };
  return { namespace, calls, lookups };
}

// ---------------------------------------------------------------------------
// Queue spy
// ---------------------------------------------------------------------------

export interface QueueSpy {
  queue: Queue<WorkflowExecuteMessage>;
  sent: { body: WorkflowExecuteMessage; options: QueueSendOptions | undefined }[];
}

/** Wraps the real `WORKFLOW_QUEUE` producer and records every `send`. */
export function spyQueue(real: Queue<WorkflowExecuteMessage> = env.WORKFLOW_QUEUE): QueueSpy {
  const sent: QueueSpy["sent"] = [];
  const queue = {
    async send(body: WorkflowExecuteMessage, options?: QueueSendOptions) {
      sent.push({ body: structuredClone(body), options });
      return real.send(body, options);
    },
    async sendBatch(messages: Iterable<MessageSendRequest<WorkflowExecuteMessage>>, options?: QueueSendBatchOptions) {
      for (const m of messages) sent.push({ body: structuredClone(m.body), options: undefined });
      return real.sendBatch(messages, options);
    },
  };
  return { queue: queue as unknown as Queue<WorkflowExecuteMessage>, sent };
}

// ---------------------------------------------------------------------------
// API worker
// ---------------------------------------------------------------------------

export interface ApiHarness {
  env: ApiEnv;
  dispatcher: FakeDispatcher;
  queue: QueueSpy;
}

/** The real test env plus a fake dispatcher and a spied queue. */
export function apiHarness(options: { dispatcher?: FakeDispatcher; env?: Partial<ApiEnv> } = {}): ApiHarness {
  const dispatcher = options.dispatcher ?? fakeDispatcher();
  const queue = spyQueue();
  const apiEnv: ApiEnv = { ...env, DISPATCHER: dispatcher.namespace, WORKFLOW_QUEUE: queue.queue, ...options.env };
  return { env: apiEnv, dispatcher, queue };
}

export interface ApiCall {
  /** CLI token (sent as `Authorization: Bearer <token>`) or a full Authorization header value via `headers`. */
  token?: string;
  /** An object is JSON-encoded; a string or stream is sent as is. */
  body?: unknown;
  headers?: Record<string, string>;
  env?: ApiEnv;
  /** The worker to call; defaults to the deployed API worker (`platform dev` runs src/dev/routes/devApiWorker.ts). */
  worker?: { fetch(request: Request, env: ApiEnv, ctx: ExecutionContext): Promise<Response> };
}

export async function callApi(method: string, path: string, call: ApiCall = {}): Promise<Response> {
  const headers = new Headers(call.headers);
  if (call.token !== undefined) headers.set("authorization", `Bearer ${call.token}`);
  let body: BodyInit | undefined;
  if (call.body === undefined) body = undefined;
  else if (typeof call.body === "string" || call.body instanceof ReadableStream || call.body instanceof Uint8Array) {
    body = call.body as BodyInit;
  } else {
    body = JSON.stringify(call.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  const request = new Request(API_ORIGIN + path, { method, headers, body });
  return (call.worker ?? api).fetch(request, call.env ?? apiHarness().env, createExecutionContext());
}

/**
 * A JSON call as the route tests write it (`token` null for none; `env` the plain test env unless given),
 * read back whole: status, text, parsed body and headers.
 */
export async function callJson(method: string, path: string, body: unknown, token: string | null, callEnv?: object) {
  const response = await callApi(method, path, {
    token: token || undefined,
    body,
    headers: { "content-type": "application/json" },
    env: (callEnv ?? env) as ApiEnv,
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as any, headers: response.headers };
}

/** Asserts the platform's error shape and returns the parsed body. */
export async function expectError(
  response: Response,
  status: number,
  code: string,
): Promise<{ error: { code: string; message: string } }> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type") ?? "").toMatch(/application\/json/);
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe("string");
  expect(body.error.message.length).toBeGreaterThan(0);
  return body;
}

// ---------------------------------------------------------------------------
// Users and projects
// ---------------------------------------------------------------------------

export interface TestUser {
  id: number;
  email: string;
  token: string;
}

/** Creates (or reuses) a user through `POST /admin/users` and returns a fresh CLI token. */
export async function createUserWithToken(email: string): Promise<TestUser> {
  const response = await callApi("POST", "/admin/users", { token: ADMIN_TOKEN, body: { email } });
  expect(response.status, await response.clone().text()).toBe(201);
  const { user, token } = (await response.json()) as { user: { id: number; email: string }; token: string };
  return { id: user.id, email: user.email, token };
}

export interface PublicProjectBody {
  id: number;
  slug: string;
  scriptName: string;
  private: boolean;
  createdAt: string;
  updatedAt: string;
}

/** Creates a project through `POST /projects` and returns its public shape. */
export async function createProject(
  token: string,
  slug: string,
  options: { private?: boolean } = {},
): Promise<PublicProjectBody> {
  const body: Record<string, unknown> = { slug };
  if (options.private !== undefined) body.private = options.private;
  const response = await callApi("POST", "/projects", { token, body });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { project: PublicProjectBody }).project;
}

/** The full D1 row, secret included (tests only). */
export async function projectRow(slug: string): Promise<ProjectRow> {
  const row = await env.DB.prepare("SELECT * FROM projects WHERE slug = ?").bind(slug).first<ProjectRow>();
  if (!row) throw new Error(`no project row for ${slug}`);
  return row;
}

/** A user plus a project they own, with the project's D1 row. */
export async function userWithProject(
  email: string,
  slug: string,
  options: { private?: boolean } = {},
): Promise<{ user: TestUser; project: PublicProjectBody; row: ProjectRow }> {
  const user = await createUserWithToken(email);
  const project = await createProject(user.token, slug, options);
  return { user, project, row: await projectRow(slug) };
}

/** Records the project's crons the way `platform push` does (PUT /projects/:slug/metadata). */
export async function putCrons(
  token: string,
  slug: string,
  crons: { name: string; schedule: string }[],
): Promise<void> {
  const response = await callApi("PUT", `/projects/${slug}/metadata`, { token, body: { crons } });
  expect(response.status, await response.clone().text()).toBe(200);
}

/** The first column of each D1 row `sql` selects with `bindings`, in order. */
export async function columnOf<T>(sql: string, ...bindings: unknown[]): Promise<T[]> {
  const rows = await env.DB.prepare(sql)
    .bind(...bindings)
    .raw<[T]>();
  return rows.map(([value]) => value);
}

export async function countRows(table: "users" | "cli_tokens" | "projects" | "project_crons"): Promise<number> {
  const row = await env.DB.prepare(`SELECT COUNT(*) AS n FROM ${table}`).first<{ n: number }>();
  return row!.n;
}

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------

/** A body stream of `total` bytes in 4 KiB chunks, sent without Content-Length. */
export function streamOfBytes(total: number, fill = 0x20): ReadableStream<Uint8Array> {
  let remaining = total;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (remaining <= 0) {
        controller.close();
        return;
      }
      const n = Math.min(4096, remaining);
      remaining -= n;
      controller.enqueue(new Uint8Array(n).fill(fill));
    },
  });
}

/** A stream carrying `text` (no Content-Length). */
export function streamOfText(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** A JSON object whose encoding is exactly `size` bytes: `{"slug":…,"pad":"   …"}`. */
export function jsonOfSize(fields: Record<string, unknown>, size: number): string {
  const base = JSON.stringify({ ...fields, pad: "" });
  if (base.length > size) throw new Error("fields alone exceed size");
  return JSON.stringify({ ...fields, pad: " ".repeat(size - base.length) });
}
