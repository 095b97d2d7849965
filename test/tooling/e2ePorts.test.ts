import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Each e2e file serves on fixed ports of 8800–8999. Two files on one port fail whichever starts
// second whenever they run together (CI saw approvals and package, signinOidc and workflowCli do it),
// and `npm test` runs e2e files beside each other. So each port belongs to one file (the
// chaos e2e file names its long run's ports too).
const repo = path.resolve(import.meta.dirname, "../..");

/** The ports a file serves on: each 88xx/89xx number it names, and the Node twin of `devBackends(N)`. */
function portsOf(text: string): Set<number> {
  const ports = new Set<number>();
  for (const [literal] of text.matchAll(/\b8[89]\d\d\b/g)) ports.add(Number(literal));
  for (const [, base] of text.matchAll(/devBackends\((\d+)\)/g)) ports.add(Number(base) + 1);
  return ports;
}

/** Each port named by more than one file, with the files. */
function sharedPorts(files: Record<string, string>): Record<number, string[]> {
  const owners = new Map<number, string[]>();
  for (const [file, text] of Object.entries(files))
    for (const port of portsOf(text)) owners.set(port, [...(owners.get(port) ?? []), file]);
  return Object.fromEntries([...owners].filter(([, named]) => named.length > 1));
}

describe("e2e ports: one file each", () => {
  it.each([
    ["a literal port", 'startDev([dir, "--port", "8960"])', [8960]],
    ["devBackends(N) serves N and N + 1", "describe.each(devBackends(8946))", [8946, 8947]],
    ["a range in a comment", "// Ports of this file: 8950-8955.", [8950, 8955]],
    ["numbers outside 8800–8999 are no ports", "const LIMIT = 8192; const MS = 9000;", []],
  ])("reads %s", (_case, text, ports) => {
    expect([...portsOf(text)].sort()).toEqual(ports);
  });

  it("finds a port two files name", () => {
    expect(sharedPorts({ "a.ts": "--port 8960", "b.ts": "PORT = 8960", "c.ts": "8961" })).toEqual({
      8960: ["a.ts", "b.ts"],
    });
  });

  it("no two files of the tree serve on one port", () => {
    const files: Record<string, string> = {};
    for (const name of readdirSync(path.join(repo, "test/e2e")))
      if (name.endsWith(".ts")) files[name] = readFileSync(path.join(repo, "test/e2e", name), "utf8");
    expect(sharedPorts(files)).toEqual({});
  });
});
