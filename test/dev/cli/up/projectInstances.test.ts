import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Request as MiniflareRequest } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AcceptedScript } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { createProjectInstances, type ProjectInstances } from "#src/dev/cli/up/projectInstances.ts";
import { isScriptTraceToken, TRACE_SCRIPT_HEADER } from "#src/dev/routes/scriptTraceToken.ts";
import { LOCAL_DISPATCH_SCRIPT_HEADER } from "#src/workers/dispatch/localDispatchHeader.ts";
import { acceptedScript } from "#test/support/cloudflare/acceptedScript.ts";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";

/** A project's module: answers its version and counts calls in a Durable Object, whose count survives a new version. */
const counter = (version: string) => `
export class Counter {
  constructor(state) { this.state = state; }
  async fetch() {
    const n = ((await this.state.storage.get("n")) ?? 0) + 1;
    await this.state.storage.put("n", n);
    return new Response(String(n));
  }
}
export default {
  async fetch(request, env) {
    if (new URL(request.url).pathname === "/count") return env.COUNTER.get(env.COUNTER.idFromName("one")).fetch(request);
    return new Response(${JSON.stringify(version)} + " saw " + (request.headers.get(${JSON.stringify(LOCAL_DISPATCH_SCRIPT_HEADER)}) ?? "no script header"));
  },
};`;

function script(name: string, module: string, tailConsumers?: { service: string }[]): AcceptedScript {
  return acceptedScript(
    name,
    module,
    { binding: "COUNTER", className: "Counter" },
    {
      migrationTag: "v1",
      metadata: tailConsumers ? { tail_consumers: tailConsumers } : {},
    },
  );
}

let stateDir: string;
let projects: ProjectInstances;
const lines: string[] = [];

/** Stands in for the trace intake in the platform's workerd: keeps what each forwarder posts. */
const TRACE_KEY = "k".repeat(64);
interface Posted {
  script: string | undefined;
  authorization: string | undefined;
  traces: { logs: { message: unknown[] }[]; event: { request?: { url: string } } }[];
}
const posted: Posted[] = [];
let intake: Server;

/** A platform worker's request to a project, as the dispatcher sends it (LOCAL_DISPATCH). */
async function call(scriptName: string, pathname = "/"): Promise<{ status: number; body: string }> {
  const response = await projects.dispatch(
    new MiniflareRequest(`http://shop.localhost/${pathname.replace(/^\//, "")}`, {
      headers: { [LOCAL_DISPATCH_SCRIPT_HEADER]: scriptName },
    }),
  );
  return { status: response.status, body: await response.text() };
}

beforeAll(async () => {
  intake = createServer(async (request, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    posted.push({
      script: request.headers[TRACE_SCRIPT_HEADER] as string | undefined,
      authorization: request.headers.authorization,
      traces: JSON.parse(body),
    });
    response.writeHead(204).end();
  });
  await new Promise<void>((resolve) => intake.listen(0, "127.0.0.1", resolve));
  const { port } = intake.address() as { port: number };
  stateDir = mkdtempSync(path.join(tmpdir(), "project-instances-"));
  // A project pushed before each ran in its own workerd: its objects sat in the platform's state.
  mkdirSync(path.join(stateDir, "state", "do", "proj-a-Counter"), { recursive: true });
  writeFileSync(path.join(stateDir, "state", "do", "proj-a-Counter", "kept"), "");
  projects = createProjectInstances({
    stateDir,
    services: {},
    traces: { address: `127.0.0.1:${port}`, consumer: "platform-api", key: TRACE_KEY },
    log: (line) => lines.push(line),
  });
});

afterAll(async () => {
  await projects?.stop();
  await new Promise((resolve) => intake?.close(resolve));
  removeWorkDir(stateDir);
});

describe("platform up's projects, each in a workerd of its own", () => {
  it("serves each pushed project, without the dispatch header, and moves its old objects into its own state", async () => {
    expect(await projects.serve(script("proj-a", counter("a1")))).toBe(true);
    expect(await projects.serve(script("proj-b", counter("b1")))).toBe(true);
    expect(await call("proj-a")).toEqual({ status: 200, body: "a1 saw no script header" });
    expect(await call("proj-b")).toEqual({ status: 200, body: "b1 saw no script header" });
    expect(existsSync(path.join(stateDir, "scripts", "proj-a", "state", "do", "proj-a-Counter", "kept"))).toBe(true);
    expect(existsSync(path.join(stateDir, "state", "do", "proj-a-Counter"))).toBe(false);
  });

  it("answers 502 for a project that serves nothing", async () => {
    const response = await call("proj-nobody");
    expect(response.status).toBe(502);
    expect(JSON.parse(response.body)).toEqual({
      error: { code: "upstream_error", message: "Project worker proj-nobody is not deployed." },
    });
  });

  it("swaps one project's version while the other answers every request, and its own requests wait for the new one", async () => {
    expect((await call("proj-a", "/count")).body).toBe("1");
    let pushing = true;
    const neighbour: { status: number; body: string }[] = [];
    const hammer = (async () => {
      while (pushing)
        neighbour.push(await call("proj-b").catch((error: unknown) => ({ status: 0, body: String(error) })));
    })();
    const during = Promise.all([call("proj-a"), call("proj-a"), call("proj-a")]);
    const pushes = [
      await projects.serve(script("proj-a", counter("a2"))),
      await projects.serve(script("proj-a", counter("a3"))),
    ];
    const ownDuring = await during;
    pushing = false;
    await hammer;

    expect(pushes).toEqual([true, true]);
    expect(neighbour.length).toBeGreaterThan(0);
    expect(neighbour.filter((r) => r.status !== 200 || r.body !== "b1 saw no script header")).toEqual([]);
    for (const answer of ownDuring) expect(answer.body).toMatch(/^a[123] saw no script header$/);
    expect((await call("proj-a")).body).toBe("a3 saw no script header");
    // The project's Durable Objects went on where they were.
    expect((await call("proj-a", "/count")).body).toBe("2");
  });

  it("keeps serving the previous version when a new one does not start, and says why", async () => {
    lines.length = 0;
    const served = await projects.serve(script("proj-a", `throw new Error("boom"); ${counter("a4")}`));
    expect(served).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(
        /^Not serving the new version of proj-a: it did not start: Uncaught Error: boom\n\s+at worker\.js:1:7\. Serving the previous one\.$/,
      ),
    ]);
    expect(await call("proj-a")).toEqual({ status: 200, body: "a3 saw no script header" });
    expect((await call("proj-b")).body).toBe("b1 saw no script header");
  });

  it("serves nothing for a first version that does not start, saying so, and the others answer", async () => {
    lines.length = 0;
    expect(await projects.serve(script("proj-c", "this is not javascript("))).toBe(false);
    expect(lines).toEqual([
      expect.stringMatching(/^Not serving proj-c: it did not start: Uncaught SyntaxError: Unexpected identifier 'is'/),
    ]);
    expect((await call("proj-c")).status).toBe(502);
    expect((await call("proj-b")).body).toBe("b1 saw no script header");
  });

  it("hands a project's traces to the intake with its own script's token, which its code cannot read", async () => {
    const tailed = (name: string) => `export default {
  fetch(request, env) {
    console.log("hello from", ${JSON.stringify(name)});
    return new Response(Object.keys(env).sort().join(","));
  },
};`;
    const consumer = [{ service: "platform-api" }];
    expect(await projects.serve(script("proj-t", tailed("proj-t"), consumer))).toBe(true);
    expect(await projects.serve(script("proj-u", tailed("proj-u"), consumer))).toBe(true);
    // The project's code sees its own bindings only: no token, no way to the intake.
    expect(await call("proj-t", "/hello")).toEqual({ status: 200, body: "COUNTER,PLATFORM_LOCAL" });
    expect((await call("proj-u", "/hi")).status).toBe(200);
    await expect.poll(() => posted.map((p) => p.script).sort(), { timeout: 10_000 }).toEqual(["proj-t", "proj-u"]);

    const byScript = new Map(posted.map((p) => [p.script!, p]));
    const t = byScript.get("proj-t")!;
    expect(t.traces.map((trace) => [trace.event.request?.url, trace.logs.map((log) => log.message)])).toEqual([
      ["http://shop.localhost/hello", [["hello from", "proj-t"]]],
    ]);
    const tToken = t.authorization!.replace(/^Bearer /, "");
    const uToken = byScript.get("proj-u")!.authorization!.replace(/^Bearer /, "");
    expect(await isScriptTraceToken(TRACE_KEY, "proj-t", tToken)).toBe(true);
    // Each forwarder's token names its own script only.
    expect(await isScriptTraceToken(TRACE_KEY, "proj-t", uToken)).toBe(false);
    expect(await isScriptTraceToken(TRACE_KEY, "proj-u", uToken)).toBe(true);
  });
});
