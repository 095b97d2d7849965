import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { CliError, parseCommandArgs } from "#src/dev/cli/commandLine.ts";
import { logoutCommand } from "#src/dev/cli/commands/logout.ts";
import { readCredentials, saveLogin } from "#src/dev/cli/credentials/credentialsFile.ts";
import { cliHome } from "#test/support/node/index.ts";

// `platform logout`: the stored token is forgotten only once the platform has revoked it (or no longer
// knows it); a revoke that fails is reported and the token kept, so logout can be retried.

/** Answers `POST /cli/logout` with the status a test sets, and records what each request carried. */
let api: Server;
let apiUrl: string;
let answer: { status: number; body: unknown };
const seen: { method: string; path: string; authorization: string | undefined }[] = [];
beforeAll(async () => {
  api = createServer((request, response) => {
    seen.push({ method: request.method ?? "", path: request.url ?? "", authorization: request.headers.authorization });
    response.writeHead(answer.status, { "content-type": "application/json" }).end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => api.listen(0, "127.0.0.1", resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => api.close(resolve)));

let home: ReturnType<typeof cliHome>;
let printed: string[];
beforeEach(() => {
  home = cliHome("logout-cli-");
  printed = home.printed;
  seen.length = 0;
  saveLogin(apiUrl, { token: "plt_stored", email: "ada@example.com" });
});
afterEach(() => home.end());

const logout = () => logoutCommand.run(parseCommandArgs(logoutCommand, []));
const storedLogins = () => Object.keys(readCredentials().logins);

describe("platform logout", () => {
  it.each([
    { name: "revokes it (200)", status: 200, body: { revoked: true } },
    {
      name: "no longer knows it (401)",
      status: 401,
      body: { error: { code: "unauthorized", message: "Invalid CLI token." } },
    },
  ])("forgets the stored token when the platform $name", async ({ status, body }) => {
    answer = { status, body };
    await logout();
    expect(seen).toEqual([{ method: "POST", path: "/cli/logout", authorization: "Bearer plt_stored" }]);
    expect(storedLogins()).toEqual([]);
    expect(printed).toEqual([`Logged out of ${apiUrl}.`]);
  });

  it.each([
    {
      status: 500,
      body: { error: { code: "internal", message: "The token could not be deleted." } },
      said: /\(500: The token could not be deleted\.\)/,
    },
    { status: 503, body: {}, said: /\(503\)/ },
    {
      status: 429,
      body: { error: { code: "rate_limited", message: "Too many requests." } },
      said: /\(429: Too many requests\.\)/,
    },
  ])("reports a revoke answered $status, exits 1 and keeps the token", async ({ status, body, said }) => {
    answer = { status, body };
    const error = await logout().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(1);
    expect((error as CliError).message).toMatch(said);
    expect((error as CliError).message).toContain(`${apiUrl} did not revoke the token`);
    expect(storedLogins()).toEqual([apiUrl]);
    expect(printed).toEqual([]);
  });

  it("keeps the token when the platform cannot be reached", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    saveLogin(gone, { token: "plt_elsewhere", email: "ada@example.com" });
    await expect(logout()).rejects.toThrow(`Cannot reach the platform API at ${gone}`);
    expect(storedLogins().sort()).toEqual([apiUrl, gone].sort());
  });
});
