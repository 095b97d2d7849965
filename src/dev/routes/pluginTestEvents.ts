import { projectLogOf } from "../../workers/api/projectLogs/projectLogRoutes.ts";
import { listProjectResources, type ResourceRow } from "../../workers/db/resourceClaims.ts";
import { PlatformError } from "../../core/errors.ts";
import { COMMAND_NAME } from "../../contracts/chatServerEvents.ts";
import { TRIGGER_PARAMETERS, type TriggerParameterName } from "../../contracts/pluginDescriptor.ts";
import {
  commandKindOf,
  pluginById,
  TRIGGERABLE_PLUGINS,
  triggerParametersOf,
  type TriggerablePlugin,
  type TriggerablePluginId,
} from "../../contracts/pluginRegistry.ts";
import { andList } from "../../core/wordList.ts";
import { readJsonObject } from "../../core/web/jsonBody.ts";
import { requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import { callProjectWorker } from "../../workers/dispatch/callProjectWorker.ts";
import { resolveDispatcher } from "../../workers/dispatch/dispatcher.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import type { DeliveryOutcome } from "../../runtime/plugins/pluginRoutes.ts";
import type { DevApiEnv } from "./devApiEnv.ts";

/**
 * `POST /projects/:slug/plugins/:plugin/test-events` `{ kind, text?, name?, channel?, message?, …parameters }`
 * (CLI token, project ownership; `platform dev` only): the local fake
 * provider sends a correctly signed webhook for the project's newest claimed
 * server/workspace to the plugin worker (chat-server messages and reactions:
 * publishes them on its Gateway, which the plugin's relay holds), as if a
 * user had typed in the chat, or clicked a button, chosen in a select,
 * submitted a modal or view the bot showed (the kinds with parameters in the
 * registry: `customId`, `values`, `fields`, `actionId`, `value`,
 * `callbackId`; `channel` and `message` say where, by default the newest
 * message showing it). What is not there to click is refused 400 with the
 * fake's reason.
 * Answers 200 with what was sent, the plugin's answer, what the project's
 * delivery came to (`outcome`: handled, no handler registered, or the
 * handler threw, with its error code and message; read from the project
 * worker's `GET /__plugin/<plugin>`, which only `platform dev` serves) and
 * the provider calls the handler made through the plugin proxy (as the fake
 * recorded them; waited for until the outcome is known, or until quiet, at
 * most ~5 s). `platform plugin trigger` calls this route; so can the console.
 *
 * The plugins with events and their kinds are the registry's (`triggers`).
 * Each one's fake is bound to the API worker as `FAKE_<ID>` and speaks the
 * same two routes: `POST /__fake/trigger { kind, resourceId, name?, text?, channel?, message?, …parameters }`
 * (send the event from that claimed resource) and `GET /__fake/recorded`
 * (the provider API calls it received: an array, or `{ calls }`).
 */

export type TestEventPlugin = TriggerablePluginId;

/** Longest `text` (the chat server's message limit). */
export const TEST_EVENT_TEXT_MAX = 2000;
/** Room for the longest text even when every character is JSON-escaped (`\u0001` is 6 bytes). */
const BODY_LIMIT_BYTES = 16 * 1024;
/** Where a test event happens: a channel id, a message id or ts. */
const PLACE = /^[A-Za-z0-9.]{1,40}$/;
const MAX_LIST = 25;
const MAX_FIELDS = 100;
const PARAMETER_NAMES = Object.keys(TRIGGER_PARAMETERS) as TriggerParameterName[];
const BODY_FIELDS = ["kind", "text", "name", "channel", "message", ...PARAMETER_NAMES];

/** The API worker's binding to a plugin's fake provider under `platform dev`: `FAKE_CHATSERVER`. */
export function fakeBinding(plugin: TestEventPlugin): `FAKE_${string}` {
  return `FAKE_${plugin.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

export interface TestEventRequest {
  kind: string;
  text?: string;
  name?: string;
  channel?: string;
  message?: string;
  customId?: string;
  values?: string[];
  fields?: Record<string, string>;
  actionId?: string;
  value?: string;
  callbackId?: string;
}

/** How long to wait for the handler's provider calls (it runs in the background after the webhook is answered). */
export interface CallWaitTiming {
  /** Give up after this long with whatever was recorded (default 5 s). */
  maxMS: number;
  /** Stop once calls were seen and none came for this long (default 800 ms). */
  quietMS: number;
  /** Poll the fake's record this often (default 200 ms). */
  pollMS: number;
}

export const DEFAULT_CALL_WAIT: CallWaitTiming = { maxMS: 5000, quietMS: 800, pollMS: 200 };

/** What the project's delivery came to, as its runtime recorded it. */
export type TestEventOutcome =
  | { result: "handled"; handlers?: number }
  | { result: "no_handler"; message: string }
  | { result: "failed"; error: { code: string; message: string; stack?: string } };

/** The project's recorded delivery outcomes (oldest first), or null when it cannot say (not `platform dev`). */
export type DeliveryOutcomes = () => Promise<DeliveryOutcome[] | null>;

export interface TestEventAnswer {
  sent: {
    kind: string;
    name?: string;
    text?: string;
    resource: { plugin: TestEventPlugin; externalId: string; displayName: string | null };
  };
  summary: string;
  pluginAnswer: { status: number | null; inlineReply?: unknown };
  /** Null when the project's answer did not come within the wait (or cannot be read). */
  outcome: TestEventOutcome | null;
  calls: unknown[];
}

/** The plugin a route names, if its fake can send test events; else 404 (no such plugin) or 400 (no events). */
export function testEventPlugin(value: string | undefined): TriggerablePlugin {
  const triggerable = TRIGGERABLE_PLUGINS.find(({ id }) => id === value);
  if (triggerable) return triggerable;
  const exist = `test events exist for ${andList(TRIGGERABLE_PLUGINS.map(({ id }) => id))}`;
  if (value !== undefined && pluginById(value))
    throw new PlatformError("invalid_input", `The ${value} plugin has no events to send: ${exist}.`);
  throw new PlatformError("not_found", `No plugin named ${JSON.stringify(value ?? "")}: ${exist}.`);
}

/** One parameter's value, checked against its type and length (pluginDescriptor.ts TRIGGER_PARAMETERS). */
function parameterValue(name: TriggerParameterName, value: unknown): string | string[] | Record<string, string> {
  const { type, maxChars } = TRIGGER_PARAMETERS[name];
  const bounded = (v: unknown, what: string): string => {
    if (typeof v !== "string" || v.length < 1 || v.length > maxChars)
      throw new PlatformError("invalid_input", `${what} must be a string of 1–${maxChars} characters.`);
    return v;
  };
  if (type === "string") return bounded(value, name);
  if (type === "list") {
    if (!Array.isArray(value) || value.length > MAX_LIST)
      throw new PlatformError("invalid_input", `${name} must be an array of at most ${MAX_LIST} strings.`);
    return value.map((v, i) => bounded(v, `${name}[${i}]`));
  }
  if (!value || typeof value !== "object" || Array.isArray(value) || Object.keys(value).length > MAX_FIELDS)
    throw new PlatformError("invalid_input", `${name} must be an object of at most ${MAX_FIELDS} strings by field id.`);
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      if (key.length < 1 || key.length > 255)
        throw new PlatformError("invalid_input", `${name}: a field id is 1–255 characters.`);
      if (typeof v !== "string" || v.length > maxChars)
        throw new PlatformError("invalid_input", `${name}.${key} must be a string of at most ${maxChars} characters.`);
      return [key, v];
    }),
  );
}

/** Checks the body: known fields only, a kind this plugin has, a command name, bounded text, the kind's parameters. */
export function parseTestEventRequest(plugin: TestEventPlugin, body: Record<string, unknown>): TestEventRequest {
  const unknown = Object.keys(body).filter((key) => !BODY_FIELDS.includes(key));
  if (unknown.length)
    throw new PlatformError(
      "invalid_input",
      `Unknown field(s) ${unknown.map((k) => JSON.stringify(k)).join(", ")}: a test event takes ${andList(BODY_FIELDS)}.`,
    );
  const kinds: readonly string[] = pluginById(plugin).triggers.kinds;
  const { kind, text, name } = body;
  if (typeof kind !== "string" || !kinds.includes(kind)) {
    throw new PlatformError(
      "invalid_input",
      `kind must be one of ${kinds.join(", ")} for ${plugin} (got ${JSON.stringify(kind ?? null)}).`,
    );
  }
  if (text !== undefined) {
    if (typeof text !== "string") throw new PlatformError("invalid_input", "text must be a string.");
    if (text.length < 1 || text.length > TEST_EVENT_TEXT_MAX) {
      throw new PlatformError(
        "invalid_input",
        `text must be 1–${TEST_EVENT_TEXT_MAX} characters (got ${text.length}).`,
      );
    }
  }
  const commandKind = commandKindOf(pluginById(plugin));
  const isCommand = kind === commandKind;
  if (name !== undefined && !isCommand) {
    const withCommands = TRIGGERABLE_PLUGINS.filter((p) => commandKindOf(p)).map(({ id }) => id);
    throw new PlatformError("invalid_input", `name applies to ${andList(withCommands)} commands only.`);
  }
  if (isCommand) {
    if (name === undefined || name === "")
      throw new PlatformError("invalid_input", `A ${plugin} ${commandKind} needs a name (the command, e.g. "hello").`);
    if (typeof name !== "string" || !COMMAND_NAME.test(name)) {
      throw new PlatformError(
        "invalid_input",
        `name must be a command name: 1–32 lowercase letters, digits, - or _, without the leading / (got ${JSON.stringify(name)}).`,
      );
    }
  }
  const request: TestEventRequest = {
    kind,
    ...(isCommand ? { name: name as string } : {}),
    ...(text !== undefined ? { text } : {}),
  };
  for (const place of ["channel", "message"] as const) {
    const value = body[place];
    if (value === undefined) continue;
    if (typeof value !== "string" || !PLACE.test(value))
      throw new PlatformError("invalid_input", `${place} must be a channel or message id (letters, digits and dots).`);
    request[place] = value;
  }
  const uses = triggerParametersOf(pluginById(plugin), kind);
  for (const name of PARAMETER_NAMES) {
    const use = uses.find((u) => u.name === name);
    if (body[name] === undefined) {
      if (use?.required)
        throw new PlatformError(
          "invalid_input",
          `A ${plugin} ${kind} needs ${name} (${TRIGGER_PARAMETERS[name].about}; --${TRIGGER_PARAMETERS[name].flag} in the CLI).`,
        );
      continue;
    }
    if (!use) {
      const takers = TRIGGERABLE_PLUGINS.flatMap((p) =>
        p.triggers.kinds
          .filter((k) => triggerParametersOf(p, k).some((u) => u.name === name))
          .map((k) => `${p.id} ${k}`),
      );
      throw new PlatformError("invalid_input", `${name} applies to ${andList(takers)} only.`);
    }
    Object.assign(request, { [name]: parameterValue(name, body[name]) });
  }
  return request;
}

/** The project's newest claimed resource of this plugin (what an install claimed last). */
function newestResource(resources: ResourceRow[]): ResourceRow | undefined {
  return [...resources].sort((a, b) => b.created_at - a.created_at || b.id - a.id)[0];
}

/**
 * What a dev route about a project's chat needs: the plugin's local fake
 * provider (`notUnderDev`, 404, when there is none) and the server or
 * workspace the project claimed last (409 when it has not installed yet).
 */
export async function localInstall(
  env: DevApiEnv,
  project: ProjectRow,
  plugin: TestEventPlugin,
  notUnderDev: string,
): Promise<{ fake: Fetcher; resource: ResourceRow }> {
  const fake = env[fakeBinding(plugin)];
  if (!fake) throw new PlatformError("not_found", notUnderDev);
  const resource = newestResource(await listProjectResources(env.DB, project.id, plugin));
  if (!resource)
    throw new PlatformError(
      "conflict",
      `Project "${project.slug}" has no ${plugin} install yet: run \`platform plugin install ${plugin}\` first.`,
    );
  return { fake, resource };
}

export async function callFake(
  fake: Fetcher,
  plugin: TestEventPlugin,
  path: string,
  init?: RequestInit,
): Promise<{ status: number; body: unknown }> {
  let response: Response;
  try {
    response = await fake.fetch(`http://fake-${plugin}${path}`, init);
  } catch (error) {
    throw new PlatformError(
      "upstream_error",
      `Cannot reach the local fake ${plugin} provider: ${(error as Error).message}`,
    );
  }
  const text = await response.text();
  try {
    return { status: response.status, body: text ? JSON.parse(text) : null };
  } catch {
    return { status: response.status, body: text };
  }
}

/** The fake's record of provider API calls (an array, or `{ calls }`). */
async function recordedCalls(fake: Fetcher, plugin: TestEventPlugin): Promise<unknown[]> {
  const { status, body } = await callFake(fake, plugin, "/__fake/recorded");
  if (status !== 200)
    throw new PlatformError(
      "upstream_error",
      `The fake ${plugin} provider did not list its recorded calls (${status}).`,
    );
  const list = Array.isArray(body) ? body : (body as { calls?: unknown } | null)?.calls;
  return Array.isArray(list) ? list.map(withoutCredentials) : [];
}

/** An interaction's token in a path (`/interactions/{id}/{token}/callback`, `/webhooks/{app}/{token}…`). */
const INTERACTION_TOKEN_IN_PATH = /^(\/api\/v10\/(?:interactions|webhooks)\/\d+\/)[^/?]+/;

/**
 * A recorded call without the credentials the fake saw (chatserver `auth`,
 * workspace `token`, an interaction's token in the path): tokens stay with
 * the plugin workers, even fake ones.
 */
function withoutCredentials(call: unknown): unknown {
  if (typeof call !== "object" || call === null) return call;
  const { auth: _auth, token: _token, ...rest } = call as Record<string, unknown>;
  if (typeof rest.path === "string") rest.path = rest.path.replace(INTERACTION_TOKEN_IN_PATH, "$1<token>");
  return rest;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function lastSeq(list: DeliveryOutcome[] | null): number {
  return list?.at(-1)?.seq ?? 0;
}

function outcomeOf(recorded: DeliveryOutcome): TestEventOutcome {
  if (recorded.result === "failed") return { result: "failed", error: recorded.error };
  if (recorded.result === "no_handler") return { result: "no_handler", message: recorded.message };
  return { result: "handled", ...(recorded.handlers !== undefined ? { handlers: recorded.handlers } : {}) };
}

/**
 * Waits for what followed the event: the project's delivery outcome newer
 * than `afterSeq` (its handler's calls were made before it answered), or,
 * when the project cannot say, calls that stop coming (quiet); at most `maxMS`.
 */
async function waitForOutcome(
  fake: Fetcher,
  plugin: TestEventPlugin,
  seen: number,
  deliveryOutcomes: DeliveryOutcomes,
  afterSeq: number,
  timing: CallWaitTiming,
): Promise<{ outcome: TestEventOutcome | null; calls: unknown[]; projectCanSay: boolean }> {
  let calls: unknown[] = [];
  const until = Date.now() + timing.maxMS;
  let quietSince = 0;
  let canSay = true;
  while (Date.now() < until) {
    await sleep(timing.pollMS);
    const recorded: DeliveryOutcome[] | null = canSay ? await deliveryOutcomes() : null;
    canSay = recorded !== null;
    const now = (await recordedCalls(fake, plugin)).slice(seen);
    const next = recorded?.find((o) => o.seq > afterSeq);
    if (next) return { outcome: outcomeOf(next), calls: now, projectCanSay: true };
    if (now.length !== calls.length) {
      calls = now;
      quietSince = Date.now();
    } else if (!canSay && calls.length && Date.now() - quietSince > timing.quietMS) break;
  }
  return { outcome: null, calls, projectCanSay: canSay };
}

/**
 * A plugin that records on its resource the events the project listens to
 * (`metadata.events`, its last /deploy: the workspace plugin) delivers only
 * those: the rest go nowhere.
 */
function undeliveredEvent(plugin: TestEventPlugin, resource: ResourceRow, kind: string): string | null {
  // Clicks and submits are delivered whatever the project listens to.
  if (triggerParametersOf(pluginById(plugin), kind).length) return null;
  let events: unknown;
  try {
    events = (JSON.parse(resource.metadata) as { events?: unknown }).events;
  } catch {
    return null;
  }
  if (!Array.isArray(events) || events.includes(kind)) return null;
  return `The project registers no ${plugin}.onEvent("${kind}") handler, so the plugin did not deliver it.`;
}

/** What a test event names: `/hello`, `approve:42`, `values a, b`, `fields title=…`. */
function describeTarget(event: TestEventRequest): string {
  const id = event.name ? `/${event.name}` : (event.customId ?? event.actionId ?? event.callbackId);
  const parts = [
    id ? ` ${id}` : "",
    event.values?.length ? ` values ${event.values.join(", ")}` : "",
    event.value !== undefined ? ` value ${event.value}` : "",
    event.fields
      ? ` fields ${Object.entries(event.fields)
          .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
          .join(" ")}`
      : "",
  ];
  return parts.join("");
}

function describeOutcome(outcome: TestEventOutcome | null, projectCanSay: boolean, waitedMS: number): string {
  if (!outcome)
    return projectCanSay
      ? ` The project did not answer the delivery within ${waitedMS / 1000} s (see the \`platform dev\` terminal).`
      : "";
  if (outcome.result === "no_handler") return ` No handler is registered: ${outcome.message}`;
  if (outcome.result === "failed") return ` The handler threw ${outcome.error.code}: ${outcome.error.message}`;
  return " The project's handler ran.";
}

/** The event to have the fake send, to the installed resource. */
export interface TestEventToSend {
  plugin: TestEventPlugin;
  resource: ResourceRow;
  event: TestEventRequest;
}

/** How long to wait for the calls that follow, and how to read the project's delivery outcomes (none by default). */
export interface TestEventWatch {
  timing?: CallWaitTiming;
  deliveryOutcomes?: DeliveryOutcomes;
}

/**
 * Has the fake send the event and collects what followed. Exported for tests
 * that shorten the wait; the route uses `DEFAULT_CALL_WAIT`.
 */
export async function sendTestEvent(
  fake: Fetcher,
  { plugin, resource, event }: TestEventToSend,
  { timing = DEFAULT_CALL_WAIT, deliveryOutcomes = async () => null }: TestEventWatch = {},
): Promise<TestEventAnswer> {
  const seen = (await recordedCalls(fake, plugin)).length;
  const afterSeq = lastSeq(await deliveryOutcomes());
  const trigger = { ...event, resourceId: resource.external_resource_id };
  const delivered = await callFake(fake, plugin, "/__fake/trigger", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(trigger),
  });
  if (delivered.status === 400 && triggerParametersOf(pluginById(plugin), event.kind).length) {
    // Nothing there to click or submit: the developer's input, as the fake explains it.
    const why = (delivered.body as { error?: unknown } | null)?.error;
    throw new PlatformError("invalid_input", typeof why === "string" ? why : JSON.stringify(delivered.body));
  }
  if (delivered.status !== 200) {
    throw new PlatformError(
      "upstream_error",
      `The fake ${plugin} provider refused the test event (${delivered.status}): ${JSON.stringify(delivered.body)}`,
      {
        status: delivered.status,
        answer: delivered.body,
      },
    );
  }
  // chatserver command: { answers: [{ status, body }] }; chatserver message / reaction: { delivered: "gateway",
  // sessions, live } (the fake publishes them on its Gateway, which the plugin's relay holds); workspace:
  // { response: { status, body } }.
  const answer = delivered.body as {
    response?: { status?: number; body?: unknown };
    answers?: { status?: number; body?: unknown }[];
    delivered?: unknown;
    sessions?: unknown;
    live?: unknown;
    interaction?: { failed?: unknown };
  } | null;
  const overGateway = answer?.delivered === "gateway";
  if (overGateway && !answer?.sessions) {
    throw new PlatformError(
      "not_ready",
      "The chat-server plugin's Gateway relay is not connected to the fake chat server, so nothing received the event. It starts on the next install or `platform dev` deploy (see the `platform dev` terminal for its errors).",
    );
  }
  const pluginResponse = answer?.response ?? answer?.answers?.[0];
  const status = typeof pluginResponse?.status === "number" ? pluginResponse.status : null;
  const inlineReply = (pluginResponse?.body as { data?: { content?: unknown } } | null | undefined)?.data?.content;

  const displayName = resource.display_name || null;
  const where = `${resource.resource_type} "${displayName ?? resource.external_resource_id}"`;
  const what = `${event.kind}${describeTarget(event)}${event.text !== undefined ? ` ${JSON.stringify(event.text)}` : ""} from ${where}`;
  const failed =
    typeof answer?.interaction?.failed === "string" ? ` The interaction failed: ${answer.interaction.failed}` : "";
  const sentLine = overGateway
    ? `Sent a ${what} over the chat server's Gateway; ${answer?.live ? "the plugin's relay is connected" : "the plugin's relay is reconnecting and gets it when it resumes"}.`
    : `Sent a signed ${what}; the plugin answered ${status ?? "?"}.${failed}`;

  // The plugin delivers to the project in the background: wait briefly for what the handler did through the proxy.
  const undelivered = undeliveredEvent(plugin, resource, event.kind);
  const { outcome, calls, projectCanSay } = undelivered
    ? { outcome: { result: "no_handler" as const, message: undelivered }, calls: [], projectCanSay: true }
    : await waitForOutcome(fake, plugin, seen, deliveryOutcomes, afterSeq, timing);
  return {
    sent: { ...event, resource: { plugin, externalId: resource.external_resource_id, displayName } },
    summary: sentLine + describeOutcome(outcome, projectCanSay, timing.maxMS),
    pluginAnswer: { status, ...(inlineReply !== undefined ? { inlineReply } : {}) },
    outcome,
    calls,
  };
}

export async function sendPluginTestEvent(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const { id: plugin } = testEventPlugin(request.params.plugin);
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const event = parseTestEventRequest(plugin, await readJsonObject(request, BODY_LIMIT_BYTES));
  const { fake, resource } = await localInstall(
    env,
    project,
    plugin,
    "Test events need the local fake providers: they work with `platform dev` only.",
  );
  return Response.json(
    await sendTestEvent(
      fake,
      { plugin, resource, event },
      { deliveryOutcomes: projectDeliveryOutcomes(env, project, plugin) },
    ),
    { headers: { "Cache-Control": "no-store" } },
  );
}

/** Failed deliveries' stacks pointed at the project's sources by its log's source map, as a failed step's are. */
async function withMappedStacks(
  env: DevApiEnv,
  project: ProjectRow,
  outcomes: DeliveryOutcome[],
): Promise<DeliveryOutcome[]> {
  const failed = outcomes.filter((o): o is Extract<DeliveryOutcome, { result: "failed" }> => o.result === "failed");
  const stacks = failed.flatMap((o) => (o.error.stack ? [o.error.stack] : []));
  const log = projectLogOf(env, project.id);
  if (stacks.length === 0 || !log) return outcomes;
  const mapped = await log.mapStacks(stacks);
  let next = 0;
  for (const outcome of failed) if (outcome.error.stack) outcome.error.stack = mapped[next++] ?? outcome.error.stack;
  return outcomes;
}

/** The local project worker's record of its `/__plugin/<plugin>` deliveries (`GET`, internal token). */
function projectDeliveryOutcomes(env: DevApiEnv, project: ProjectRow, plugin: TestEventPlugin): DeliveryOutcomes {
  return async () => {
    try {
      const response = await callProjectWorker(resolveDispatcher(env), project, {
        method: "GET",
        pathAndQuery: `/__plugin/${plugin}`,
      });
      if (response.status !== 200) {
        await response.body?.cancel();
        return null;
      }
      const { outcomes } = (await response.json()) as { outcomes?: unknown };
      return Array.isArray(outcomes) ? await withMappedStacks(env, project, outcomes as DeliveryOutcome[]) : null;
    } catch {
      return null;
    }
  };
}
