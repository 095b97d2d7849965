import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProjectBuild } from "#src/dev/cli/build/buildProject.ts";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { deployProject } from "#src/dev/cli/deploy/deployProject.ts";

/** The API's answers to the stranded-runs check, as the deployment route gives them (test/workers/api/strandedRunsCheck.workerd.test.ts). */
const stranded = Array.from({ length: 20 }, (_, i) => ({
  runId: `run-${i}`,
  workflow: "order",
  step: "approve",
  status: "running",
  missing: "step",
}));

let server: Server;
let apiUrl: string;
const received: Record<string, unknown>[] = [];
const dir = mkdtempSync(join(tmpdir(), "platform-push-"));
const build = { bundlePath: join(dir, "worker.js"), capabilities: {}, durableObjects: [] } as unknown as ProjectBuild;

beforeAll(async () => {
  writeFileSync(build.bundlePath, "export default {}");
  server = createServer((request, response) => {
    let text = "";
    request.on("data", (chunk) => {
      text += chunk;
    });
    request.on("end", () => {
      const body = JSON.parse(text) as Record<string, unknown>;
      received.push(body);
      response.setHeader("content-type", "application/json");
      if (body.force === true) {
        response.end(
          JSON.stringify({
            scriptName: "proj-shop",
            url: "https://shop.example.test/",
            plugins: {},
            version: "v3",
            stranded: { count: 23, runs: stranded },
          }),
        );
        return;
      }
      response.statusCode = 409;
      response.end(
        JSON.stringify({ error: { code: "conflict", message: "would strand", details: { stranded, count: 23 } } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("platform push and the stranded-runs check", () => {
  it("a refused push fails listing run id, workflow and step (the first 20 and the count) and the ways out", async () => {
    const error = await deployProject({ apiUrl, token: "t", slug: "shop", build, metadata: {} }).catch((e) => e);
    expect(error).toBeInstanceOf(CliError);
    const lines = (error as CliError).message.split("\n");
    expect(lines[0]).toBe("Push refused: it would strand 23 live workflow run(s):");
    expect(lines[1]).toBe("  run     workflow  step");
    expect(lines).toContain('  run-0   order     approve  (step "approve" is gone)');
    expect(lines).toContain('  run-19  order     approve  (step "approve" is gone)');
    expect(lines).toContain("  … and 3 more");
    expect((error as CliError).message).toContain("renamed");
    expect((error as CliError).message).toContain("--force");
    expect(received.at(-1)).not.toHaveProperty("force");
  });

  it("--force sends force and answers the version and what it strands", async () => {
    const result = await deployProject({ apiUrl, token: "t", slug: "shop", build, metadata: {}, force: true });
    expect(received.at(-1)).toMatchObject({ force: true });
    expect(result).toMatchObject({ version: "v3", stranded: { count: 23 } });
  });
});
