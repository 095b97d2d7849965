import { mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
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

/**
 * `count` distinct ports the OS says are free right now (all held open until every one is chosen),
 * none handed to another start on this machine in the last minute (`reservations`).
 */
export async function freePorts(
  host: string,
  count: number,
  reservations: PortReservations = portReservations(),
): Promise<number[]> {
  const net = await import("node:net");
  // Below the OS's ephemeral range (32768 and up on Linux): a process binding port 0 (workerd's own sockets,
  // another start's helpers) is never handed one of these between our choosing it and workerd binding it.
  const listen = (port: number) =>
    new Promise<import("node:net").Server | null>((resolve) => {
      const server = net.createServer();
      server.once("error", () => resolve(null));
      server.listen(port, host, () => resolve(server));
    });
  const held: import("node:net").Server[] = [];
  const chosen: number[] = [];
  try {
    // Every candidate stays open until the end, so none is chosen twice.
    for (let tries = 0; chosen.length < count; tries++) {
      if (tries >= count + MAX_REFUSED) throw new Error(`No ${count} free ports that no other start holds.`);
      const port = PORT_RANGE.low + Math.floor(Math.random() * (PORT_RANGE.high - PORT_RANGE.low));
      const server = await listen(port);
      if (!server) continue;
      held.push(server);
      if (reservations.take(port)) chosen.push(port);
    }
    return chosen;
  } finally {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))));
  }
}

/** Where freePorts looks: above the e2e tests' fixed ports (8800–8999), below the ephemeral range. */
const PORT_RANGE = { low: 20_000, high: 32_768 };

/** How many candidates another start may hold before freePorts gives up. */
const MAX_REFUSED = 200;

/**
 * Ports handed out on this machine, each kept for a minute: a start chooses its ports, closes them,
 * and workerd binds them a few seconds later, so two starts at once could both be handed one port
 * the OS saw free. A reservation is a file created exclusively, so of two starts only one gets it.
 */
export interface PortReservations {
  /** True when `port` was not handed to another start in the last minute (it is this start's now). */
  take(port: number): boolean;
}

const RESERVATION_MS = 60_000;

export function portReservations(
  dir: string = path.join(tmpdir(), "platform-port-reservations"),
  now: () => number = Date.now,
): PortReservations {
  const create = (file: string) => {
    try {
      writeFileSync(file, String(process.pid), { flag: "wx" });
      return "created";
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "EEXIST" ? "exists" : "unavailable";
    }
  };
  let usable: boolean | undefined;
  return {
    take(port) {
      if (usable === undefined) {
        try {
          mkdirSync(dir, { recursive: true });
          usable = true;
        } catch {
          usable = false;
        }
      }
      // Without the folder no start can reserve: the port is as free as the OS says.
      if (!usable) return true;
      const file = path.join(dir, String(port));
      const first = create(file);
      if (first !== "exists") return true;
      let age: number;
      try {
        age = now() - statSync(file).mtimeMs;
      } catch {
        age = Number.POSITIVE_INFINITY;
      }
      if (age < RESERVATION_MS) return false;
      try {
        rmSync(file, { force: true });
      } catch {
        return false;
      }
      return create(file) !== "exists";
    },
  };
}
