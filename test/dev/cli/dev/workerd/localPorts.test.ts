import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { assignLocalPorts, freePorts } from "#src/dev/cli/dev/workerd/localPorts.ts";

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
