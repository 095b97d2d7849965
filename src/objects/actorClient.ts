import type { DurableObject } from "cloudflare:workers";
import { asPlatformError } from "../core/errors.ts";
import { meteringRequests, meterRpcCall } from "./storageMeter.ts";

/**
 * An actor's RPC methods as its callers see them: each public method of the
 * class with its own parameters, answering a promise of what it returns. (The
 * RPC stub's own types recurse through JSON values too deeply for the type
 * checker, so they are derived here from the class instead.)
 */
export type ActorClient<Actor> = {
  [Method in Exclude<keyof Actor, keyof DurableObject>]: Actor[Method] extends (...args: infer Args) => infer Result
    ? (...args: Args) => Promise<Awaited<Result>>
    : never;
};

/** One RPC through an actor client: the method called and its arguments. */
export interface ActorCall {
  readonly method: string;
  readonly args: readonly unknown[];
}

/**
 * What every call through an actor client goes through. Production calls
 * straight through; the RPC fault tests put a seeded wrapper here that fails
 * a call before the callee acts or after it acted
 * (test/support/workflow/actorRpcFaults.ts).
 */
export const actorCalls = {
  around: (_call: ActorCall, invoke: () => Promise<unknown>): Promise<unknown> => invoke(),
};

/**
 * The client of one actor stub. An error thrown in an actor reaches the caller
 * as a plain Error that keeps its own properties (code, details, cause, the
 * brand) but not its class. Callers branch on `instanceof PlatformError`
 * (`run.result()` users), so each call through the client restores the class
 * of an error branded a PlatformError, with its cause.
 */
export function actorClient<Actor>(stub: object): ActorClient<Actor> {
  return new Proxy(stub, {
    get(target, method) {
      // Not a thenable (so a client can be returned from async code), and no RPC call for symbols.
      if (typeof method !== "string" || method === "then") return undefined;
      return async (...args: unknown[]) => {
        try {
          const call = () => (target as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args);
          // The meter (bench, tests) counts the calls that reach the actor, inside any fault wrapper.
          const invoke = meteringRequests()
            ? () => {
                meterRpcCall();
                return call();
              }
            : call;
          return await actorCalls.around({ method, args }, invoke);
        } catch (error) {
          throw asPlatformError(error) ?? error;
        }
      };
    },
  }) as ActorClient<Actor>;
}
