/**
 * How platform workers reach a project's worker by script name.
 *
 * Deployed, `DISPATCHER` is a Workers for Platforms dispatch namespace. Dispatch
 * namespaces do not run locally, so `platform dev` instead gives each platform
 * worker one service binding per project worker plus `LOCAL_SCRIPTS`, a JSON
 * map from script name to binding name; both sit behind the same `get(name)`.
 */
export interface Dispatcher {
  get(scriptName: string): Fetcher | null;
}

export interface DispatcherEnv {
  DISPATCHER?: { get(name: string): Fetcher };
  LOCAL_SCRIPTS?: string;
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
  return {
    get(scriptName) {
      const binding = Object.hasOwn(table, scriptName) ? table[scriptName] : undefined;
      return (binding && bindings[binding]) || null;
    },
  };
}
