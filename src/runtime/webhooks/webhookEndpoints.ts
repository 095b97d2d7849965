import { PlatformError } from "../../core/errors.ts";
import {
  isWebhookVerifyScheme,
  WEBHOOK_PROVIDERS,
  type WebhookVerifyScheme,
} from "../../core/webhooks/webhookProviders.ts";

/**
 * What a delivery's router decides: start a run, send an event to one, or nothing.
 * @example
 * const decision: WebhookDecision = { start: { workflow: "fulfil", data: { order: 42 }, id: "order-42" } };
 */
export type WebhookDecision =
  | { start: { workflow: string; data?: unknown; id?: string } }
  | { send: { runId: string; event: string; payload?: unknown } }
  | { send: { workflowId: string; event: string; payload?: unknown; start: { name: string; data?: unknown } } }
  | null;

/**
 * `headers`: the provider's id headers of the delivery (lowercase names).
 * @example
 * const route: WebhookRouter = (payload) =>
 *   payload.type === "checkout.session.completed" ? { start: { workflow: "fulfil", data: payload } } : null;
 */
export type WebhookRouter = (
  payload: unknown,
  headers: Record<string, string>,
) => WebhookDecision | Promise<WebhookDecision>;

/**
 * How `webhook(name, options)` verifies deliveries and what it does with them.
 * @example
 * const options: WebhookOptions = { verify: "standard", secret: "WEBHOOK_SECRET", start: "sync" };
 */
export interface WebhookOptions {
  /** The provider's signing scheme. */
  verify: WebhookVerifyScheme;
  /** The name of the project secret (`platform secret put`, `.dev.vars`) holding the signing secret (Discord: the public key). */
  secret: string;
  /** Starts this workflow with `{ event, headers }` for each new delivery. */
  start?: string;
  /** Decides per delivery instead of `start`. */
  route?: WebhookRouter;
}

export interface WebhookEndpoint extends WebhookOptions {
  name: string;
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const endpoints = new Map<string, WebhookEndpoint>();

/** Checks and records one `webhook(name, options)` registration (top level, once per name). */
export function registerWebhook(name: unknown, options: unknown): WebhookEndpoint {
  if (typeof name !== "string" || !NAME.test(name))
    throw new PlatformError(
      "invalid_input",
      `webhook name must be 1-64 characters of a-z, 0-9, _ and - (starting with a letter or digit), got ${JSON.stringify(name)}`,
    );
  if (endpoints.has(name)) throw new PlatformError("invalid_input", `webhook "${name}" is registered twice`);
  if (typeof options !== "object" || options === null)
    throw new PlatformError("invalid_input", `webhook "${name}" needs options { verify, secret, start | route }`);
  const { verify, secret, start, route, ...rest } = options as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length)
    throw new PlatformError("invalid_input", `webhook "${name}": unknown option(s) ${unknown.join(", ")}`);
  if (!isWebhookVerifyScheme(verify))
    throw new PlatformError(
      "invalid_input",
      `webhook "${name}": verify must be one of ${Object.keys(WEBHOOK_PROVIDERS).join(", ")}, got ${JSON.stringify(verify)}`,
    );
  if (typeof secret !== "string" || !SECRET_NAME.test(secret) || /^PLATFORM_/i.test(secret))
    throw new PlatformError(
      "invalid_input",
      `webhook "${name}": secret must name a project secret (letters, digits, underscores, e.g. STRIPE_WEBHOOK_SECRET), got ${JSON.stringify(secret)}`,
    );
  if ((start === undefined) === (route === undefined))
    throw new PlatformError(
      "invalid_input",
      `webhook "${name}" needs exactly one of start (a workflow name) or route (a function)`,
    );
  if (start !== undefined && (typeof start !== "string" || start === ""))
    throw new PlatformError("invalid_input", `webhook "${name}": start must be a workflow name`);
  if (route !== undefined && typeof route !== "function")
    throw new PlatformError(
      "invalid_input",
      `webhook "${name}": route must be a function (payload, headers) => decision`,
    );
  const endpoint: WebhookEndpoint = {
    name,
    verify,
    secret,
    ...(start === undefined ? {} : { start: start as string }),
    ...(route === undefined ? {} : { route: route as WebhookRouter }),
  };
  endpoints.set(name, endpoint);
  return endpoint;
}

/** Forgets every endpoint (between test files that share one module graph). */
export function forgetWebhooks(): void {
  endpoints.clear();
}

export function webhookEndpoint(name: string): WebhookEndpoint | undefined {
  return endpoints.get(name);
}

/** What the build records: each endpoint's path, scheme, secret name and what it does. */
export function webhookMetadata(): { name: string; path: string; verify: string; secret: string; start?: string }[] {
  return [...endpoints.values()].map(({ name, verify, secret, start }) => ({
    name,
    path: `/__platform/webhooks/${name}`,
    verify,
    secret,
    ...(start === undefined ? {} : { start }),
  }));
}
