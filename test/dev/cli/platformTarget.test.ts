import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { credentialsPath, saveLogin } from "#src/dev/cli/credentials/credentialsFile.ts";
import { writeDevSession } from "#src/dev/cli/dev/state/devState.ts";
import {
  callPlatformApi,
  requestPlatformApi,
  resolvePlatformApi,
  resolveProjectTarget,
} from "#src/dev/cli/platformTarget.ts";

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "target-"));
  file = path.join(dir, "credentials.json");
  saveLogin("https://api.example.app", { token: "plt_stored", email: "ada@example.com" }, file);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("resolvePlatformApi", () => {
  it.each([
    ["the last login when nothing is named", undefined, {}, "https://api.example.app", "plt_stored", "login"],
    ["--api over the last login", "https://other.example.app/", {}, "https://other.example.app", null, null],
    [
      "$PLATFORM_API_URL when no --api",
      undefined,
      { PLATFORM_API_URL: "https://api.example.app/" },
      "https://api.example.app",
      "plt_stored",
      "login",
    ],
    [
      "$PLATFORM_TOKEN over the stored token",
      undefined,
      { PLATFORM_TOKEN: "plt_ci" },
      "https://api.example.app",
      "plt_ci",
      "PLATFORM_TOKEN",
    ],
    [
      "empty variables as unset",
      undefined,
      { PLATFORM_TOKEN: "", PLATFORM_API_URL: "" },
      "https://api.example.app",
      "plt_stored",
      "login",
    ],
  ] as const)("takes %s", (_name, api, env, apiUrl, token, source) => {
    expect(resolvePlatformApi(api, env, file)).toEqual({ apiUrl, token, source });
  });

  it("is null when no API is named anywhere", () => {
    expect(resolvePlatformApi(undefined, {}, path.join(dir, "none.json"))).toBeNull();
  });

  it("refuses a malformed --api with exit code 2", () => {
    expect(() => resolvePlatformApi("nope", {}, file)).toThrow(expect.objectContaining({ exitCode: 2 }));
  });
});

describe("calling the API worker", () => {
  // Answers each path as named: /ok, /refused (403 with the API's error shape), /html (not JSON); echoes the request.
  let api: Server;
  let apiUrl: string;
  beforeAll(async () => {
    api = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk) => {
        body += chunk;
      });
      request.on("end", () => {
        const seen = { method: request.method, authorization: request.headers.authorization, body };
        if (request.url === "/html") response.writeHead(502).end("<html>bad gateway</html>");
        else if (request.url === "/refused")
          response
            .writeHead(403, { "content-type": "application/json" })
            .end(JSON.stringify({ error: { code: "forbidden", message: "Not your project." } }));
        else response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(seen));
      });
    });
    await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
    apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => api.close(resolve)));
  const target = () => ({ apiUrl, token: "plt_t", slug: "shop" });

  it("sends the token and a JSON body, and hands back the answer", async () => {
    expect(await callPlatformApi(target(), "POST", "/ok", { a: 1 })).toEqual({
      method: "POST",
      authorization: "Bearer plt_t",
      body: '{"a":1}',
    });
  });

  it.each([
    ["/refused", 403, { error: { code: "forbidden", message: "Not your project." } }, "Not your project."],
    ["/html", 502, {}, "The platform API answered 502."],
  ])("hands back the refusal at %s, or throws its message", async (pathname, status, json, message) => {
    expect(await requestPlatformApi(target(), "GET", pathname)).toEqual({ status, ok: false, json });
    await expect(callPlatformApi(target(), "GET", pathname)).rejects.toThrow(message);
  });

  it("says which API it cannot reach", async () => {
    const closed = await new Promise<string>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const url = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
        probe.close(() => resolve(url));
      });
    });
    await expect(requestPlatformApi({ ...target(), apiUrl: closed }, "GET", "/ok")).rejects.toThrow(
      `Cannot reach the platform API at ${closed}`,
    );
  });
});

describe("resolveProjectTarget (what runs: logs, webhook deliveries)", () => {
  // A project folder `shop` with no package.json; the stored login is the machine's last `platform login`.
  let project: string;
  beforeEach(() => {
    project = path.join(dir, "shop");
    mkdirSync(path.join(project, ".platform"), { recursive: true });
    vi.stubEnv("XDG_CONFIG_HOME", dir);
    vi.stubEnv("PLATFORM_TOKEN", "");
    vi.stubEnv("PLATFORM_API_URL", "");
    saveLogin("https://api.example.app", { token: "plt_stored", email: "ada@example.com" }, credentialsPath());
  });
  afterEach(() => vi.unstubAllEnvs());
  const dev = { pid: process.pid, slug: "shop-dev", url: "", apiUrl: "http://127.0.0.1:8787", cliToken: "plt_dev" };

  it.each([
    ["the platform dev running for --dir", true, {}, { apiUrl: dev.apiUrl, token: "plt_dev", slug: "shop-dev" }],
    [
      "the pushed project when no dev runs",
      false,
      {},
      { apiUrl: "https://api.example.app", token: "plt_stored", slug: "shop" },
    ],
    [
      "the pushed project for --slug",
      true,
      { slug: "blog" },
      { apiUrl: "https://api.example.app", token: "plt_stored", slug: "blog" },
    ],
  ] as const)("takes %s", (_name, devRuns, values, target) => {
    if (devRuns) writeDevSession(path.join(project, ".platform"), dev);
    expect(resolveProjectTarget("slug" in values ? values : { dir: project })).toEqual(target);
  });

  it("says how to name a platform when no dev runs and none is known", () => {
    rmSync(credentialsPath());
    expect(() => resolveProjectTarget({ dir: project })).toThrow(
      `No \`platform dev\` is running for ${project}, and no platform is named: start it, or pass --api URL (and --slug S).`,
    );
  });
});
