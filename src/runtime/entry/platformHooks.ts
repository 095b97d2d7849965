import type { PlatformEnv } from "./platformEnv.ts";

/**
 * The small, always-bundled meeting point between the entry wrapper and the
 * optional capabilities (workflows, sign-in, plugins). A capability registers
 * itself here the first time user code touches it, so a project that never
 * uses one bundles none of its code.
 */

export type InternalRouteHandler = (
  request: Request,
  env: PlatformEnv,
  ctx: ExecutionContext,
  /** The path below the route's prefix, e.g. `/run_1/execute` for `/__workflow/run_1/execute`. */
  rest: string,
) => Promise<Response>;

export type PublicRouteHandler = (request: Request, env: PlatformEnv, ctx: ExecutionContext) => Promise<Response | null>;

export interface CronRegistration {
  name: string;
  schedule: string;
  run: (env: PlatformEnv, ctx: ExecutionContext) => Promise<string>;
}

type Initializer = (env: PlatformEnv) => void;
type MetadataContributor = () => unknown;

const internalRoutes = new Map<string, InternalRouteHandler>();
const publicRoutes: PublicRouteHandler[] = [];
const initializers: Initializer[] = [];
const initialized = new WeakSet<object>();
const crons = new Map<string, CronRegistration>();
const metadata = new Map<string, MetadataContributor>();
let cronRegistrar: ((cron: CronRegistration) => void) | null = null;

/** `prefix` is the first path segment, e.g. `__workflow`. */
export function registerInternalRoute(prefix: string, handler: InternalRouteHandler): void {
  internalRoutes.set(prefix, handler);
}

export function internalRouteFor(prefix: string): InternalRouteHandler | undefined {
  return internalRoutes.get(prefix);
}

/** Capability routes that answer before user code (e.g. `/api/auth/*`); `null` passes on. */
export function registerPublicRoute(handler: PublicRouteHandler): void {
  if (!publicRoutes.includes(handler)) publicRoutes.push(handler);
}

export function publicRouteHandlers(): readonly PublicRouteHandler[] {
  return publicRoutes;
}

/** Runs once per environment object, on the first request, alarm or cron that sees it. */
export function onPlatformInit(initializer: Initializer): void {
  if (!initializers.includes(initializer)) initializers.push(initializer);
}

export function initializePlatform(env: PlatformEnv): void {
  if (initialized.has(env)) return;
  for (const init of initializers) init(env);
  initialized.add(env);
}

/** Called by the entry prelude before user code is evaluated. */
export function installCronRegistrar(): void {
  cronRegistrar = (cron) => crons.set(cron.name, cron);
}

/** A capability registers a cron; fails loudly when the entry did not prepare the runtime. */
export function registerCron(cron: CronRegistration): void {
  if (!cronRegistrar) {
    throw new Error(
      "The platform runtime is not initialized: build the project with `platform dev` or `platform push` so the entry wrapper loads first.",
    );
  }
  cronRegistrar(cron);
}

export function cronNamed(name: string): CronRegistration | undefined {
  return crons.get(name);
}

export function registerMetadata(key: string, contributor: MetadataContributor): void {
  metadata.set(key, contributor);
}

/** What the build records about the project: registered crons plus each capability's own entry. */
export function collectMetadata(): Record<string, unknown> {
  const out: Record<string, unknown> = {
    crons: [...crons.values()].map(({ name, schedule }) => ({ name, schedule })),
  };
  for (const [key, contributor] of metadata) out[key] = contributor();
  return out;
}
