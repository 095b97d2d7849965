import { isPortFree } from "../process/portOwner.ts";

/** Every socket of the local platform besides the entry port (the project's, or `platform up`'s one port). */
export interface LocalPorts {
  /** The API worker and the console. */
  api: number;
  /** The login worker (`--login oidc`, `platform up`). */
  login: number;
  /** `platform up`'s trace intake (src/dev/routes/traceIntakeWorker.ts), where pushed projects' traces arrive. */
  traces: number;
  /** Each plugin worker, by its deployed name. */
  plugins: Record<string, number>;
  /** Each fake provider, by the plugin it stands in for (`LocalPluginId`). */
  fakes: Record<string, number>;
}

/**
 * Hands out every port the local platform needs, each held open until all
 * are chosen so that no two are the same. `keepApi`: the API port to keep
 * (the console's address survives a restart) when it is still free.
 */
export async function assignLocalPorts(input: {
  host: string;
  pluginWorkers: string[];
  fakes: readonly string[];
  keepApi?: number;
}): Promise<LocalPorts> {
  const { host, pluginWorkers, fakes, keepApi } = input;
  const names = [
    "api",
    "login",
    "traces",
    ...pluginWorkers.map((w) => `plugin:${w}`),
    ...fakes.map((f) => `fake:${f}`),
  ];
  const ports = await freePorts(host, names.length);
  const byName = new Map(names.map((name, i) => [name, ports[i]!]));
  const kept = keepApi && !ports.includes(keepApi) && (await isPortFree(host, keepApi)) ? keepApi : undefined;
  return {
    api: kept ?? byName.get("api")!,
    login: byName.get("login")!,
    traces: byName.get("traces")!,
    plugins: Object.fromEntries(pluginWorkers.map((w) => [w, byName.get(`plugin:${w}`)!])),
    fakes: Object.fromEntries(fakes.map((f) => [f, byName.get(`fake:${f}`)!])),
  };
}

/** `count` distinct ports the OS says are free right now (all held open until every one is chosen). */
export async function freePorts(host: string, count: number): Promise<number[]> {
  const net = await import("node:net");
  const servers = await Promise.all(
    Array.from({ length: count }, () => {
      const server = net.createServer();
      return new Promise<import("node:net").Server>((resolve, reject) => {
        server.once("error", reject);
        server.listen(0, host, () => resolve(server));
      });
    }),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
