import type { CronDelivery } from "../../contracts/cronDelivery.ts";
import type { PlatformEnv } from "./platformEnv.ts";

/**
 * The platform runtime of one project worker: its environment, crons,
 * internal and public routes and build metadata, in one object. The
 * capabilities (workflows, sign-in, plugins) register into it when user code
 * first touches them, so a project that never uses one bundles none of its
 * code; the entry wrapper serves from it and hands it the environment of
 * every request, cron and event, as the workflow actors do in their
 * constructor. Nothing here depends on what was imported first: the object
 * exists as soon as any capability imports it, before user code runs.
 */

export type InternalRouteHandler = (
  request: Request,
  env: PlatformEnv,
  ctx: ExecutionContext,
  /** The path below the route's prefix, e.g. `/run_1/execute` for `/__workflow/run_1/execute`. */
  rest: string,
) => Promise<Response>;

export type PublicRouteHandler = (
  request: Request,
  env: PlatformEnv,
  ctx: ExecutionContext,
) => Promise<Response | null>;

export interface CronRegistration {
  name: string;
  schedule: string;
  /** An IANA zone the schedule is read in; absent: UTC. */
  timezone?: string;
  /** `delivery.scheduledTime` is the minute the platform's scheduler delivers; absent when run by hand. */
  run: (env: PlatformEnv, ctx: ExecutionContext, delivery: CronDelivery) => Promise<string>;
}

/** A capability's setup for an environment (e.g. the workflow backend bound to its actors). */
export type EnvListener = (env: PlatformEnv) => void;

export class PlatformRuntime {
  readonly #internalRoutes = new Map<string, InternalRouteHandler>();
  readonly #publicRoutes: PublicRouteHandler[] = [];
  readonly #crons = new Map<string, CronRegistration>();
  readonly #metadata = new Map<string, () => unknown>();
  readonly #envListeners: EnvListener[] = [];
  readonly #forgetters: (() => void)[] = [];
  #env: PlatformEnv | null = null;

  /** The environment of the latest request, cron, event or actor; null before the first. */
  get env(): PlatformEnv | null {
    return this.#env;
  }

  /** Called by the entry wrapper and the actors with each environment they receive; listeners run when it changes. */
  useEnv(env: PlatformEnv): void {
    if (env === this.#env) return;
    this.#env = env;
    for (const listener of this.#envListeners) listener(env);
  }

  /** Runs `listener` for every new environment, and at once for the current one. */
  onEnv(listener: EnvListener): void {
    if (this.#envListeners.includes(listener)) return;
    this.#envListeners.push(listener);
    if (this.#env) listener(this.#env);
  }

  /** `prefix` is the first path segment, e.g. `__workflow`. */
  registerInternalRoute(prefix: string, handler: InternalRouteHandler): void {
    this.#internalRoutes.set(prefix, handler);
  }

  internalRoute(prefix: string): InternalRouteHandler | undefined {
    return this.#internalRoutes.get(prefix);
  }

  /** Capability routes that answer before user code (e.g. `/api/auth/*`); `null` passes on. */
  registerPublicRoute(handler: PublicRouteHandler): void {
    if (!this.#publicRoutes.includes(handler)) this.#publicRoutes.push(handler);
  }

  get publicRoutes(): readonly PublicRouteHandler[] {
    return this.#publicRoutes;
  }

  registerCron(cron: CronRegistration): void {
    this.#crons.set(cron.name, cron);
  }

  cron(name: string): CronRegistration | undefined {
    return this.#crons.get(name);
  }

  /** `forget` drops what user code registered into a capability (its workflows, webhooks, handlers). */
  onForget(forget: () => void): void {
    if (!this.#forgetters.includes(forget)) this.#forgetters.push(forget);
  }

  /**
   * Forgets what user code registered (crons, each capability's registrations) and the environment,
   * keeping the capabilities' wiring: the next environment reinstalls their backends. A test runner
   * that shares one module graph between test files (`isolate: false`) calls it after each file.
   */
  forgetRegistrations(): void {
    this.#crons.clear();
    this.#env = null;
    for (const forget of this.#forgetters) forget();
  }

  /** `contributor()` is called when the build reads the metadata. */
  registerMetadata(key: string, contributor: () => unknown): void {
    this.#metadata.set(key, contributor);
  }

  /** What the build records about the project: registered crons plus each capability's own entry. */
  metadata(): Record<string, unknown> {
    const out: Record<string, unknown> = {
      crons: [...this.#crons.values()].map(({ name, schedule, timezone }) =>
        timezone === undefined ? { name, schedule } : { name, schedule, timezone },
      ),
    };
    for (const [key, contributor] of this.#metadata) out[key] = contributor();
    return out;
  }
}

/** The runtime of this worker: the one the generated entry's wrapper serves and every capability registers into. */
export const platformRuntime = new PlatformRuntime();
