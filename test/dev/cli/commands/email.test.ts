import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parseCommandArgs } from "#src/dev/cli/commandLine.ts";
import { emailCommand } from "#src/dev/cli/commands/email.ts";
import { saveLogin } from "#src/dev/cli/credentials/credentialsFile.ts";

// `platform email list|show`: which platform it asks (the `platform dev` for --dir, or --api URL as `platform up`),
// with which token, and the usage errors that exit 2 before anything is asked.

/** Answers the outbox routes as the API worker does, and records what each request carried. */
let api: Server;
let apiUrl: string;
const seen: { path: string; authorization: string | undefined }[] = [];
beforeAll(async () => {
  api = createServer((request, response) => {
    seen.push({ path: request.url ?? "", authorization: request.headers.authorization });
    if (request.headers.authorization !== "Bearer plt_good")
      return void response
        .writeHead(401, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { code: "unauthorized", message: "Invalid CLI token." } }));
    const email = { id: "em_1", from: "shop@mail.platform.local", to: ["ada@example.com"], subject: "Hi", sentAt: "t" };
    const body = request.url?.endsWith("/outbox") ? { emails: [email] } : { email: { ...email, html: "<p>Hello</p>" } };
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => api.close(resolve)));

let work: string;
let projectDir: string;
let printed: string[];
beforeEach(() => {
  work = mkdtempSync(path.join(os.tmpdir(), "email-cli-"));
  projectDir = path.join(work, "shop-folder");
  mkdirSync(projectDir);
  writeFileSync(path.join(projectDir, "package.json"), JSON.stringify({ name: "shop" }));
  // No login, no CI token, no named API unless a test sets them.
  vi.stubEnv("XDG_CONFIG_HOME", path.join(work, "config"));
  vi.stubEnv("PLATFORM_TOKEN", "");
  vi.stubEnv("PLATFORM_API_URL", "");
  seen.length = 0;
  printed = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => void printed.push(String(line)));
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  rmSync(work, { recursive: true, force: true });
});

const run = async (...argv: string[]) =>
  emailCommand.run(parseCommandArgs(emailCommand, [...argv, "--dir", projectDir]));

describe("platform email: usage errors exit 2 before any platform is asked", () => {
  it.each([
    ["no action", []],
    ["an unknown action", ["send"]],
    ["list with an id", ["list", "em_1"]],
    ["show without an id", ["show"]],
    ["an extra argument", ["show", "em_1", "em_2"]],
    ["an unknown option", ["list", "--token", "plt_good"]],
  ])("%s", async (_case, argv) => {
    vi.stubEnv("PLATFORM_TOKEN", "plt_good");
    await expect(run(...argv, "--api", apiUrl)).rejects.toMatchObject({ exitCode: 2 });
    expect(seen).toEqual([]);
  });

  it("refuses a malformed --api URL", async () => {
    await expect(run("list", "--api", "not a url")).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe("platform email --api URL (as against `platform up`)", () => {
  it.each([
    ["$PLATFORM_TOKEN", () => vi.stubEnv("PLATFORM_TOKEN", "plt_good")],
    ["the login stored for that URL", () => saveLogin(apiUrl, { token: "plt_good", email: "ada@example.com" })],
  ])("lists the outbox of --dir's project with %s", async (_source, setUp) => {
    setUp();
    await run("list", "--api", `${apiUrl}/`);
    expect(seen).toEqual([{ path: "/projects/shop/outbox", authorization: "Bearer plt_good" }]);
    expect(printed).toEqual(["t  em_1  ada@example.com  Hi"]);
  });

  it("shows one email, its id escaped into the path", async () => {
    vi.stubEnv("PLATFORM_TOKEN", "plt_good");
    await run("show", "../../users", "--api", apiUrl);
    expect(seen).toEqual([{ path: "/projects/shop/outbox/..%2F..%2Fusers", authorization: "Bearer plt_good" }]);
    expect(printed).toContain("Subject: Hi");
  });

  it("never sends the token of another API's login, and says how to log in", async () => {
    saveLogin("https://api.example.app", { token: "plt_elsewhere", email: "ada@example.com" });
    await expect(run("list", "--api", apiUrl)).rejects.toThrow(`Not logged in to ${apiUrl}`);
    expect(seen).toEqual([]);
  });

  it("carries the API's refusal of a forged token", async () => {
    vi.stubEnv("PLATFORM_TOKEN", "plt_forged");
    await expect(run("list", "--api", apiUrl)).rejects.toThrow("Invalid CLI token.");
  });
});

describe("platform email without --api", () => {
  it("asks for the `platform dev` of --dir, and says so when none runs", async () => {
    vi.stubEnv("PLATFORM_TOKEN", "plt_good");
    await expect(run("list")).rejects.toThrow(/No `platform dev` is running for .*shop-folder.*--api URL/);
    expect(seen).toEqual([]);
  });
});
