import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { parseCommandArgs } from "#src/dev/cli/commandLine.ts";
import { emailCommand } from "#src/dev/cli/commands/email.ts";
import { stateDirFor, writeDevSession } from "#src/dev/cli/dev/state/devState.ts";
import { cliHome } from "#test/support/node/index.ts";

// `platform email list|show`: it asks the `platform dev` running for --dir, with that session's token; usage
// errors exit 2 before anything is asked, and `--api` (as against `platform up`) says where the outbox is instead.

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
let home: ReturnType<typeof cliHome>;
beforeEach(() => {
  home = cliHome("email-cli-");
  ({ work, printed } = home);
  projectDir = path.join(work, "shop-folder");
  mkdirSync(projectDir);
  writeFileSync(path.join(projectDir, "package.json"), JSON.stringify({ name: "shop" }));
  seen.length = 0;
});
afterEach(() => home.end());

const run = async (...argv: string[]) =>
  emailCommand.run(parseCommandArgs(emailCommand, [...argv, "--dir", projectDir]));

/** A `platform dev` running for the project folder (this process stands in for it), with `cliToken`. */
function devSession(cliToken = "plt_good") {
  mkdirSync(stateDirFor(projectDir), { recursive: true });
  writeDevSession(stateDirFor(projectDir), {
    pid: process.pid,
    slug: "shop",
    url: "http://127.0.0.1:8787",
    apiUrl,
    cliToken,
  });
}

describe("platform email: usage errors exit 2 before any platform is asked", () => {
  it.each([
    ["no action", []],
    ["an unknown action", ["send"]],
    ["list with an id", ["list", "em_1"]],
    ["show without an id", ["show"]],
    ["an extra argument", ["show", "em_1", "em_2"]],
    ["an unknown option", ["list", "--token", "plt_good"]],
  ])("%s", async (_case, argv) => {
    devSession();
    await expect(run(...argv)).rejects.toMatchObject({ exitCode: 2 });
    expect(seen).toEqual([]);
  });

  it("says, for --api (`platform up`), that only `platform dev` has the outbox and where `platform up` keeps email", async () => {
    devSession();
    vi.stubEnv("PLATFORM_TOKEN", "plt_good");
    const refused = run("list", "--api", apiUrl);
    await expect(refused).rejects.toMatchObject({ exitCode: 2 });
    await expect(refused).rejects.toThrow(/`platform up` serves only the deployed API's routes.*fake email provider/);
    expect(seen).toEqual([]);
  });
});

describe("platform email against the `platform dev` of --dir", () => {
  it("lists the outbox of --dir's project with the session's token", async () => {
    devSession();
    await run("list");
    expect(seen).toEqual([{ path: "/projects/shop/outbox", authorization: "Bearer plt_good" }]);
    expect(printed).toEqual(["t  em_1  ada@example.com  Hi"]);
  });

  it("shows one email, its id escaped into the path", async () => {
    devSession();
    await run("show", "../../users");
    expect(seen).toEqual([{ path: "/projects/shop/outbox/..%2F..%2Fusers", authorization: "Bearer plt_good" }]);
    expect(printed).toContain("Subject: Hi");
  });

  it("carries the API's refusal of a token it does not know", async () => {
    devSession("plt_forged");
    await expect(run("list")).rejects.toThrow("Invalid CLI token.");
  });

  it("says so when no `platform dev` runs for --dir", async () => {
    await expect(run("list")).rejects.toThrow(/No `platform dev` is running for .*shop-folder/);
    expect(seen).toEqual([]);
  });
});
