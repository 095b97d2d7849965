import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { devSession, runCli, startDev, removeWorkDir } from "../support/e2e/index.ts";

// Errors a person can act on, through the real `platform dev`. Ports of this file: 8900-8905.

const work = mkdtempSync(path.join(tmpdir(), "platform-dev-errors-"));
afterAll(() => removeWorkDir(work));

/** A project folder with `src/index.ts` = `source` and nothing installed. */
function project(name: string, source: string): string {
  const dir = path.join(work, name);
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name, private: true, type: "module" }));
  writeFileSync(path.join(dir, "src/index.ts"), source);
  return dir;
}

const THROWING_ROUTE = `import { Router } from "itty-router";

const router = Router();

function explode(): never {
  throw new Error("boom from the route");
}

router.get("/", () => new Response("ok"));
router.get("/throw", () => explode());

export default router;
`;

// The error page's stack is mapped by PLATFORM_DEV_STACK: workerd's service binding, or --node's object of that name.
describe.each([
  ["workerd", 8900, []],
  ["--node", 8901, ["--node"]],
] as const)("a route that throws, under %s", (_runtime, port, flags) => {
  it("prints the error with src/index.ts:<line>:<col>, not the bundle's position, and shows it in the 500", async () => {
    const dev = await startDev([project(`throws${port}`, THROWING_ROUTE), "--port", String(port), ...flags]);
    try {
      const response = await fetch(`${dev.url}/throw`);
      expect(response.status).toBe(500);
      await dev.waitFor(/boom from the route[\s\S]*src\/index\.ts:6:9/);
      expect(dev.output()).not.toMatch(/worker\.js:\d+|project\.mjs:\d+/);
      // A browser's navigation gets a page with the message and the stack pointed at the sources.
      const page = await fetch(`${dev.url}/throw`, { headers: { accept: "text/html" } });
      expect(page.status).toBe(500);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      const html = await page.text();
      expect(html).toContain("boom from the route");
      expect(html).toMatch(/at explode \(src\/index\.ts:6:9\)/);
      expect(html).not.toMatch(/worker\.js:\d+|project\.mjs:\d+|<script/);
      // Frames name the project's files relative to it: no absolute path to the project folder.
      expect(html).not.toContain(work);
      // An API call gets the JSON error, with the same details.
      const json = (await (await fetch(`${dev.url}/throw`)).json()) as {
        error: { code: string; details?: { message: string; stack: string } };
      };
      expect(json.error.code).toBe("internal");
      expect(json.error.details?.message).toBe("boom from the route");
      expect(json.error.details?.stack).toMatch(/at explode \(src\/index\.ts:6:9\)/);
    } finally {
      await dev.stop();
    }
  });
});

describe("a project that does not build or load at start: platform dev serves a page saying what is wrong", () => {
  const cases: [label: string, dir: () => string, port: number, expected: RegExp[]][] = [
    [
      "a name platform does not export (used)",
      () =>
        project(
          "workflo",
          `import { workflo } from "platform";\nworkflo("x", {});\nexport default { fetch: () => new Response("ok") };\n`,
        ),
      8902,
      [/"platform" has no export named "workflo" \(did you mean "workflow"\?\)/, /src\/index\.ts:1:9/],
    ],
    [
      "a name platform does not export (read from the namespace)",
      () =>
        project(
          "workflo-namespace",
          `import * as platform from "platform";\nexport default { fetch: () => new Response(typeof platform.workflo) };\n`,
        ),
      8902,
      [/"platform" has no export named "workflo"/, /src\/index\.ts:2:/],
    ],
    [
      "a syntax error, with its code frame",
      () => project("syntax", `const x y = 1;\nexport default { fetch: () => new Response(String(x)) };\n`),
      8903,
      [/Expected ";" but found "y"/, /src\/index\.ts:1:8:/, /1 │ const x y = 1;/, /\^/],
    ],
    [
      "a throw at the top level, with its location",
      () =>
        project(
          "top-level",
          `const config = JSON.parse("{not json");\nexport default { fetch: () => new Response(String(config)) };\n`,
        ),
      8904,
      [/The project threw while its module was loading/, /SyntaxError/, /src\/index\.ts:1:\d+/],
    ],
  ];
  it.each(cases)("%s", async (_label, dir, port, expected) => {
    const folder = dir();
    const dev = await startDev([folder, "--port", String(port)]);
    try {
      const output = dev.output();
      expect(output).toMatch(/The project does not run: /);
      for (const pattern of expected) expect(output).toMatch(pattern);
      expect(output).not.toMatch(/workerd binary or your configuration/);
      // The project's address says the same: a page for a browser, the platform's JSON error for anything else.
      const page = await fetch(dev.url, { headers: { accept: "text/html" } });
      expect(page.status).toBe(503);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      expect(page.headers.get("cache-control")).toBe("no-store");
      const html = await page.text();
      expect(html).toContain("The project does not run");
      expect(html).not.toMatch(/<script/);
      const api = await fetch(`${dev.url}/api/anything`);
      expect(api.status).toBe(503);
      const body = (await api.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("build_failed");
      for (const pattern of expected) expect(body.error.message).toMatch(pattern);
      // The console and the API run meanwhile.
      const { apiUrl } = devSession(folder);
      expect((await fetch(`${apiUrl}/health`)).status).toBe(200);
      expect((await fetch(`${apiUrl}/console/`)).status).toBe(200);
    } finally {
      expect((await dev.stop()).code).toBe(0);
    }
  });

  it("a folder that does not exist: exits 1 saying so", async () => {
    const result = await runCli(["dev", path.join(work, "no-such-folder"), "--port", "8905"], { timeoutMS: 90_000 });
    expect(result.code, result.stdout + result.stderr).toBe(1);
    expect(result.stdout + result.stderr).toMatch(/no folder .*no-such-folder/i);
  });
});
