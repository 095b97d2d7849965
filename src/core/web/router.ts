import { Router, type IRequest } from "itty-router";
import { errorResponse, PlatformError } from "../errors.ts";

/**
 * The one routing style of every platform worker: itty-router with one
 * `catch` (every thrown error becomes the worker's error answer, so handlers
 * never try/catch for HTTP's sake) and one `missing` (a route nobody matched).
 *
 * Handlers get the real `Request` with itty's `params` and `query` on it
 * (`RoutedRequest`), then the worker's typed env and the execution context.
 * A stage (middleware) that returns nothing passes the request on; one that
 * returns a Response answers.
 */
export type RoutedRequest = IRequest;

/** A stage or handler of a platform route; `Req` is what earlier stages put on the request. */
export type PlatformHandler<Env, Req extends RoutedRequest = RoutedRequest> = (
  request: Req,
  env: Env,
  ctx: ExecutionContext,
) => Response | undefined | void | Promise<Response | undefined> | Promise<void>;

/** Registers `handlers` (stages, then the handler) for `path`; `Req` is inferred from the most specific stage. */
export type PlatformRoute<Env> = <Req extends RoutedRequest = RoutedRequest>(
  path: string,
  ...handlers: PlatformHandler<Env, Req>[]
) => PlatformRouter<Env>;

export interface PlatformRouter<Env> {
  get: PlatformRoute<Env>;
  post: PlatformRoute<Env>;
  put: PlatformRoute<Env>;
  patch: PlatformRoute<Env>;
  delete: PlatformRoute<Env>;
  head: PlatformRoute<Env>;
  options: PlatformRoute<Env>;
  all: PlatformRoute<Env>;
  /** Every route in the order added, as itty keeps them: `[method, pattern, handlers, path]`. */
  readonly routes: readonly (readonly [method: string, match: RegExp, handlers: unknown[], path?: string])[];
  /** Always answers: a route's response, the error answer, or `missing`. Needs no `this`. */
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

export interface PlatformRouterOptions<Env = unknown> {
  /** Only paths under this prefix are routed (itty's `base`). */
  base?: string;
  /** Stages every request passes before the routes. */
  before?: PlatformHandler<Env>[];
  /**
   * Turns a thrown error into the answer; defaults to the platform's JSON
   * error (`errorResponse`). It should not log: the router logs unexpected errors.
   */
  errorResponse?: (error: unknown, request: RoutedRequest) => Response;
  /** Errors that are part of the worker's contract and need no log line; defaults to PlatformError. */
  isExpected?: (error: unknown) => boolean;
  /** The answer for a request no route matched; defaults to a `not_found` error naming the method and path. */
  missing?: (request: RoutedRequest) => Response;
}

/**
 * A router for the platform worker `name` (used in log lines). Any error a
 * stage or handler throws is answered through `options.errorResponse`; a
 * PlatformError keeps its status, anything else is a 500 `internal` and is
 * logged once, here.
 */
export function createPlatformRouter<Env>(name: string, options: PlatformRouterOptions<Env> = {}): PlatformRouter<Env> {
  const toResponse = options.errorResponse ?? ((error: unknown) => errorResponse(error));
  const isExpected = options.isExpected ?? ((error: unknown) => error instanceof PlatformError);
  const missing =
    options.missing ??
    ((request: RoutedRequest) =>
      toResponse(
        new PlatformError("not_found", `No route for ${request.method} ${new URL(request.url).pathname}.`),
        request,
      ));
  const router = Router<IRequest, [Env, ExecutionContext]>({
    base: options.base,
    before: options.before,
    catch: (error: unknown, request: RoutedRequest) => {
      if (!isExpected(error))
        console.error(`${name}: unhandled error on ${request.method} ${new URL(request.url).pathname}`, error);
      return toResponse(error, request);
    },
    finally: [(response: Response | undefined, request: RoutedRequest) => response ?? missing(request)],
  });
  // itty's own route type infers env per route; this one holds every handler to the worker's Env.
  return router as unknown as PlatformRouter<Env>;
}
