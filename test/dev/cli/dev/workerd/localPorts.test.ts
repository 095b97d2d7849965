import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assignLocalPorts, freePorts, portReservations } from "#src/dev/cli/dev/workerd/localPorts.ts";

const HOST = "127.0.0.1";
const plugins = ["platform-plugin-chatserver", "platform-plugin-workspace", "platform-plugin-email-send"];
const fakes = ["chatserver", "workspace", "email"];

const all = (ports: Awaited<ReturnType<typeof assignLocalPorts>>) => [
  ports.api,
  ports.login,
  ports.traces,
  ...Object.values(ports.plugins),
  ...Object.values(ports.fakes),
];

describe("assignLocalPorts", () => {
  it("names a distinct free port for the API, the login worker, the trace intake, each plugin worker and each fake", async () => {
    const ports = await assignLocalPorts({ host: HOST, pluginWorkers: plugins, fakes });
    expect(Object.keys(ports.plugins)).toEqual(plugins);
    expect(Object.keys(ports.fakes)).toEqual(fakes);
    expect(new Set(all(ports)).size).toBe(3 + plugins.length + fakes.length);
  });

  it("keeps the API port of the last run while it is free", async () => {
    const [kept] = await freePorts(HOST, 1);
    const ports = await assignLocalPorts({ host: HOST, pluginWorkers: plugins, fakes, keepApi: kept });
    expect(ports.api).toBe(kept);
    expect(all(ports).filter((port) => port === kept)).toHaveLength(1);
  });

  it("takes a fresh API port when the last one is taken", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
    const taken = (server.address() as { port: number }).port;
    try {
      const ports = await assignLocalPorts({ host: HOST, pluginWorkers: plugins, fakes, keepApi: taken });
      expect(ports.api).not.toBe(taken);
      expect(all(ports)).not.toContain(taken);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("freePorts beside another start", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), "platform-ports-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("passes over the ports another start holds and still hands out as many distinct ones", async () => {
    const refused: number[] = [];
    // Another start holds the first three ports the OS offers.
    const reservations = {
      take(port: number) {
        if (refused.length < 3) {
          refused.push(port);
          return false;
        }
        return true;
      },
    };
    const ports = await freePorts(HOST, 5, reservations);
    expect(new Set(ports).size).toBe(5);
    for (const port of refused) expect(ports).not.toContain(port);
  });

  it("reserves what it hands out: another start is refused each of those ports for a minute", async () => {
    const ports = await freePorts(HOST, 10, portReservations(dir));
    const other = portReservations(dir);
    for (const port of ports) expect(other.take(port)).toBe(false);
  });

  it("a reservation holds for a minute, then the port may be handed out again", () => {
    let now = 1_000_000;
    const first = portReservations(dir, () => now);
    expect(first.take(40_001)).toBe(true);
    const other = portReservations(dir, () => now);
    expect(other.take(40_001)).toBe(false);
    expect(other.take(40_002)).toBe(true);
    now = Date.now() + 61_000;
    expect(other.take(40_001)).toBe(true);
    expect(portReservations(dir).take(40_001)).toBe(false);
  });

  it("hands out ports as the OS says when no reservation can be written", () => {
    const reservations = portReservations(path.join(dir, "missing", "\0"));
    expect(reservations.take(40_003)).toBe(true);
  });
});
