import { LOCAL_DISPATCH_SCRIPT_HEADER } from "./localDispatchHeader.ts";

/**
 * How platform workers reach a project's worker by script name.
 *
 * Deployed, `DISPATCHER` is a Workers for Platforms dispatch namespace. Dispatch
 * namespaces do not run locally, so `platform dev` instead gives each platform
 * worker one service binding per project worker plus `LOCAL_SCRIPTS`, a JSON
 * map from script name to binding name; `platform up`, whose projects come
 * and go while it runs, gives them `LOCAL_DISPATCH`, one service in front of
 * every pushed project, told which one by `LOCAL_DISPATCH_SCRIPT_HEADER`.
 * All three sit behind the same `get(name)`.
 */
export interface Dispatcher {
  get(scriptName: string): ProjectWorker | null;
}

/** What the platform does with a project's worker: call it. */
export type ProjectWorker = Pick<Fetcher, "fetch">;

export interface DispatcherEnv {
  DISPATCHER?: { get(name: string): Fetcher };
  LOCAL_SCRIPTS?: string;
  LOCAL_DISPATCH?: Fetcher;
}

export function resolveDispatcher(env: DispatcherEnv): Dispatcher {
  if (env.DISPATCHER) {
    const namespace = env.DISPATCHER;
    return {
      get(scriptName) {
        try {
          return namespace.get(scriptName);
        } catch {
          return null;
        }
      },
    };
  }
  const table: Record<string, string> = env.LOCAL_SCRIPTS ? JSON.parse(env.LOCAL_SCRIPTS) : {};
  const bindings = env as unknown as Record<string, Fetcher | undefined>;
  const front = env.LOCAL_DISPATCH;
  return {
    get(scriptName) {
      const binding = Object.hasOwn(table, scriptName) ? table[scriptName] : undefined;
      const bound = binding && bindings[binding];
      if (bound) return bound;
      if (!front) return null;
      return {
        fetch(input: RequestInfo | URL, init?: RequestInit) {
          const request = new Request(input, init);
          const headers = new Headers(request.headers);
          headers.set(LOCAL_DISPATCH_SCRIPT_HEADER, scriptName);
          return front.fetch(new Request(request, { headers }));
        },
      } as ProjectWorker;
    },
  };
}
