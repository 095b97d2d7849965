import { EMAIL_SEND_ROUTE, validateEmailMessage } from "../../contracts/emailMessage.ts";
import { PLUGINS, type PluginId, type PluginRoute } from "../../contracts/pluginRegistry.ts";
import { randomHex } from "../../core/crypto/encoding.ts";
import { errorResponse, PlatformError } from "../../core/errors.ts";
import { IDENTITY_FAILURES, IDENTITY_HEADER, pathAndQueryOf, verifyRequestToken } from "../../core/requestToken.ts";
import type { PlatformEnv } from "../entry/platformEnv.ts";
import { currentRecording, type Recording } from "./testRecords.ts";

/**
 * The plugins of a test: in-process stand-ins for the chat-server,
 * workspace-chat and email-send plugin workers, bound in the test's
 * environment where the real ones are bound in a project worker's. User code
 * reaches them exactly as it reaches the real ones (`email.send` → the
 * runtime's checks → a signed POST to the binding); they verify the identity
 * token, check the message like the plugin does and answer like the
 * providers, and record every call of the run or request under test.
 */

/**
 * The project id and slug of every test environment.
 * @example
 * // a route that answers its project's slug, as under `platform dev`
 * expect(await (await testRequest(project, "/slug")).text()).toBe(TEST_PROJECT.slug);
 */
export const TEST_PROJECT = Object.freeze({ id: "1", slug: "test-project" });

let idCounter = 0;
/** Ids like the providers': unique, and ordered within a test process. */
function nextId(prefix: string): string {
  idCounter += 1;
  return `${prefix}${String(idCounter).padStart(6, "0")}`;
}

/** A workspace message timestamp (`1712345678.000042`), as the provider gives one. */
export function slackTs(): string {
  idCounter += 1;
  return `${Math.floor(Date.now() / 1000)}.${String(idCounter % 1_000_000).padStart(6, "0")}`;
}

/** A chat-server id (a snowflake: digits), as the provider gives one. */
export function snowflake(): string {
  idCounter += 1;
  return `${(BigInt(Date.now() - 1_420_070_400_000) << 22n) | BigInt(idCounter % 4096)}`;
}

type Handler = (input: Record<string, unknown>, request: Request, recording: Recording) => unknown;

function emailSend(input: Record<string, unknown>, request: Request, recording: Recording): { id: string } {
  const message = validateEmailMessage(input);
  const key = request.headers.get("Idempotency-Key");
  const known = key ? recording.emailIds.get(key) : undefined;
  if (known) return { id: known };
  const id = nextId("test-email-");
  if (key) recording.emailIds.set(key, id);
  recording.outbox.push({ to: message.to, subject: message.subject, html: message.html });
  return { id };
}

/** Every route of every plugin in the registry, answered as the plugin answers it (a new route needs its fake here). */
const ROUTES: { [Id in PluginId]: Record<PluginRoute<Id>, Handler> } = {
  "email-send": { [EMAIL_SEND_ROUTE]: emailSend },
  chatserver: {
    "/proxy/reply": () => ({ messageId: snowflake(), channelId: null }),
    "/proxy/followup": () => ({ messageId: snowflake(), channelId: null }),
    "/proxy/send-message": (input) => ({ messageId: snowflake(), channelId: input.channelId }),
    "/proxy/edit-message": (input) => ({ messageId: input.messageId, channelId: input.channelId }),
    "/proxy/update": () => ({ messageId: snowflake(), channelId: null }),
    "/proxy/show-modal": () => ({ messageId: null, channelId: null }),
  },
  workspace: {
    "/proxy/send-message": (input) => ({ channel: input.channel, ts: slackTs() }),
    "/proxy/thread-reply": (input) => ({ channel: input.channel, ts: slackTs(), threadTs: input.threadTs }),
    "/proxy/edit-message": (input) => ({ channel: input.channel, ts: input.ts }),
    "/proxy/add-reaction": () => ({ ok: true }),
    "/proxy/send-ephemeral": (input) => ({ channel: input.channel, messageTs: slackTs() }),
    "/proxy/open-view": () => ({ viewId: nextId("V") }),
  },
};

function fakePlugin(plugin: PluginId, secret: string): Fetcher {
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init);
    const body = await request.text();
    const path = new URL(request.url).pathname;
    try {
      const check = await verifyRequestToken(
        "identity",
        request.headers.get(IDENTITY_HEADER),
        { method: request.method, pathAndQuery: pathAndQueryOf(request.url), body },
        { lookupSecret: (id) => (id === TEST_PROJECT.id ? secret : null) },
      );
      if (!check.ok) throw new PlatformError("unauthorized", IDENTITY_FAILURES[check.reason]);
      const handler = (ROUTES[plugin] as Record<string, Handler>)[path];
      if (!handler || request.method !== "POST") throw new PlatformError("not_found", `No plugin route ${path}.`);
      const recording = currentRecording();
      if (!recording) {
        throw new PlatformError(
          "not_ready",
          "A plugin was called outside testWorkflow or testRequest: call plugins from a step or a request handler the test kit runs.",
        );
      }
      const parsed = JSON.parse(body || "{}") as Record<string, unknown>;
      const answer = handler(parsed, request, recording);
      recording.calls.push({ plugin, action: path.replace(/^\/(proxy\/)?/, ""), input: parsed, answer });
      return Response.json(answer);
    } catch (error) {
      return errorResponse(error);
    }
  };
  return { fetch, connect: () => Promise.reject(new Error("The test plugins take no sockets.")) } as unknown as Fetcher;
}

/** A project worker's environment under test: its identity and a fake of every plugin, at the plugin's binding. */
export function createTestEnv(): PlatformEnv {
  const secret = randomHex(32);
  return {
    PLATFORM_WORKER_SECRET: secret,
    PLATFORM_PROJECT_ID: TEST_PROJECT.id,
    PLATFORM_PROJECT_SLUG: TEST_PROJECT.slug,
    PLATFORM_LOCAL: "1",
    ...Object.fromEntries(PLUGINS.map((plugin) => [plugin.binding, fakePlugin(plugin.id, secret)])),
  };
}
