import { mkdtempSync, readFileSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_WORKER, GATEWAY_WORKER, LOGIN_WORKER } from "#src/dev/cli/dev/workerd/localPlatform.ts";
import { LOCAL_PLUGINS } from "#src/dev/cli/dev/providers/localPlugins.ts";
import { OPERATOR_TOKEN_FILE } from "#src/dev/cli/up/operatorToken.ts";
import { FAKE_OPERATOR_HEADER } from "#src/dev/fakes/operatorGate.ts";
import { getOnLoopback, initProject, launchChromium, loginToUp, removeWorkDir, runCli } from "../support/e2e/index.ts";
import { spawnCli, type StreamingCli, waitForBody } from "../support/e2e/index.ts";

// Issue 30's first attack, replayed by a tenant's own code under `platform up`: its `fetch` of the machine's loopback
// (the fakes' inspection routes, the platform's own port, a port scan) reached everything before the outbound service
// refused it. The rest of that attack, from anyone on the machine: the fakes' inspection routes (another tenant's
// outbox, the chat fake's recorded calls with the bot token, a signed click) answered without any credential, and the
// public port let `MF-Route-Override` pick any internal worker. Later, the machine by its own non-loopback address
// (what listens on all interfaces) was still let through. Ports of this file: 8840, 8841 (a service of the
// operator's, on all interfaces, which `--allow-outbound 127.0.0.1:8841` opens to projects), 8842.
const PORT = 8840;
const SERVICE_PORT = 8841;
/** This machine's first non-loopback IPv4 address, if it has one. */
const OWN_ADDRESS = Object.values(os.networkInterfaces())
  .flat()
  .find((nic) => nic?.family === "IPv4" && !nic.internal)?.address;
const API = `http://127.0.0.1:${PORT}`;
const PROBE_URL = `http://probe.localhost:${PORT}/`;

/** A project that fetches each URL it is given and reports what came back, as a hostile tenant's code would. */
const PROBE = `import { Router } from "itty-router";
import { email } from "platform";
const router = Router();
router.get("/", () => new Response("probe ready"));
router.get("/email", async () =>
  Response.json(await email.send({ to: ["bob@other.org"], subject: "Through the binding", html: "<p>ok</p>" })),
);
router.get("/fetch", async (request) => {
  const urls = JSON.parse(new URL(request.url).searchParams.get("urls"));
  const answers = await Promise.all(urls.map((url) =>
    fetch(url).then(
      async (response) => ({ url, status: response.status, body: (await response.text()).slice(0, 300) }),
      (error) => ({ url, status: 0, body: String(error) }),
    ),
  ));
  return Response.json(answers);
});
export default router;
`;

interface Answer {
  url: string;
  status: number;
  body: string;
}

let tmp: string;
let stateDir: string;
let up: StreamingCli;
let browser: Browser;
let service: Server;
/** The paths the operator's service was asked for. */
const served: string[] = [];

/** Every worker `platform up` runs in its one workerd: what `MF-Route-Override` could name. */
const INTERNAL_WORKERS = [
  API_WORKER,
  GATEWAY_WORKER,
  LOGIN_WORKER,
  "up-front",
  "platform-trace-intake",
  ...Object.values(LOCAL_PLUGINS).flatMap(({ worker, fake }) => [worker, fake]),
];

const fakeUrls = () =>
  (JSON.parse(readFileSync(path.join(stateDir, "plugins.json"), "utf8")) as { fakes: Record<string, string> }).fakes;
const operatorToken = () => readFileSync(path.join(stateDir, OPERATOR_TOKEN_FILE), "utf8").trim();

async function probe(urls: string[]): Promise<Answer[]> {
  const answer = await getOnLoopback(`${PROBE_URL}fetch?urls=${encodeURIComponent(JSON.stringify(urls))}`);
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as Answer[];
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "platform-up-isolation-"));
  stateDir = path.join(tmp, "state");
  service = createServer((request, response) => {
    served.push(request.url ?? "");
    response.end("a service of the operator's");
  });
  await new Promise<void>((resolve) => service.listen(SERVICE_PORT, "0.0.0.0", resolve));
  up = spawnCli(["up", "--port", String(PORT), "--state", stateDir, "--allow-outbound", `127.0.0.1:${SERVICE_PORT}`], {
    BROWSER: "none",
  });
  await up.waitFor(new RegExp(`Platform on ${API}`));
  browser = await launchChromium();
  const env = { XDG_CONFIG_HOME: path.join(tmp, "config"), PLATFORM_TOKEN: "", PLATFORM_API_URL: "", BROWSER: "none" };
  await loginToUp(browser, API, env, "bob@other.org");
  const dir = path.join(tmp, "probe");
  await initProject(dir, PROBE);
  const pushed = await runCli(["push", dir, "--slug", "probe"], { env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  await waitForBody(PROBE_URL, /^probe ready$/);
  // platform up, a browser sign-in and a push: minutes on a loaded 2-core machine, not a bound on speed.
}, 360_000);

afterAll(async () => {
  service?.close();
  await browser?.close();
  const code = await up?.stop("SIGTERM");
  expect(code, up?.output()).toBe(0);
  removeWorkDir(tmp);
});

describe("platform up fences a tenant's own fetch off the machine", () => {
  it("refuses the fakes' inspection routes, the platform's port and a loopback port scan with 403 outbound_refused", async () => {
    const fakes = fakeUrls();
    const targets = [
      `${fakes.email}/__fake/outbox`,
      `${fakes.chatserver}/__fake/gateway`,
      `${API}/health`,
      `http://localhost:${PORT}/probe/`,
      // A bounded scan: a few dozen ports around the platform's and the fakes'.
      // (but for the one the operator allowed: the case below)
      ...Array.from({ length: 30 }, (_, i) => PORT - 10 + i)
        .filter((port) => port !== SERVICE_PORT)
        .map((port) => `http://127.0.0.1:${port}/`),
      `http://[::1]:${PORT}/`,
    ];
    const answers = await probe(targets);
    const reached = answers.filter((answer) => answer.status !== 403 || !answer.body.includes('"outbound_refused"'));
    expect(reached, JSON.stringify(reached, null, 2)).toEqual([]);
    expect(answers[0]!.body).toContain("loopback and private addresses are refused");
  });

  it("lets through the host:port the operator allowed, and no other port", async () => {
    const answers = await probe([
      `http://127.0.0.1:${SERVICE_PORT}/allowed`,
      `http://127.0.0.1:${SERVICE_PORT + 1}/`,
      `http://localhost:${SERVICE_PORT}/by-name`,
    ]);
    expect(answers.map(({ status, body }) => [status, body.includes('"outbound_refused"') ? "refused" : body])).toEqual(
      [
        [200, "a service of the operator's"],
        [403, "refused"],
        [403, "refused"],
      ],
    );
    expect(served).toEqual(["/allowed"]);
  });

  // A machine with loopback alone has no such address to replay this on.
  it.skipIf(!OWN_ADDRESS)(
    "refuses the machine by its own non-loopback address, where the service answers too",
    async () => {
      const [answer] = await probe([`http://${OWN_ADDRESS}:${SERVICE_PORT}/by-own-address`]);
      expect(answer!.status).toBe(403);
      expect(answer!.body).toContain("this machine's own, loopback and private addresses are refused");
      expect(served).not.toContain("/by-own-address");
    },
  );

  it("still serves the project itself and sends its email through the email-send plugin's binding", async () => {
    expect(await getOnLoopback(PROBE_URL)).toEqual({ status: 200, body: "probe ready" });
    const sent = await getOnLoopback(`${PROBE_URL}email`);
    expect(sent.status, sent.body).toBe(200);
    expect((JSON.parse(sent.body) as { id: string }).id).toBeTruthy();
  });
});

describe("platform up's public port passes no runtime-internal header on", () => {
  it.each(INTERNAL_WORKERS.map((worker) => [worker]))(
    "a request with MF-Route-Override: %s is answered as the same request without it",
    async (worker) => {
      for (const pathname of ["/__fake/outbox", "/__fake/state", "/health"]) {
        const plain = await fetch(`${API}${pathname}`);
        const overridden = await fetch(`${API}${pathname}`, {
          headers: { "MF-Route-Override": worker, "MF-Disable-Pretty-Error": "true" },
        });
        const body = await overridden.text();
        expect({ status: overridden.status, body }, `${worker} ${pathname}`).toEqual({
          status: plain.status,
          body: await plain.text(),
        });
      }
    },
  );

  it("answers Miniflare's local tools (/cdn-cgi/local/*) 404 itself", async () => {
    for (const pathname of ["/cdn-cgi/local/scheduled", "/cdn-cgi/local/platform-proxy"])
      expect((await fetch(`${API}${pathname}`, { method: "POST" })).status, pathname).toBe(404);
  });
});

describe("the fakes demand their providers' credentials, and the operator token on /__fake/*", () => {
  // What a tenant's code would send if it ever had a route to a fake: no credential, or a guessed one.
  // Each answer is the provider's own: the email provider's 401 and 403, the chat server's 401, and the workspace
  // provider's 200 with `ok: false`, as its Web API answers.
  it.each([
    ["email", "POST /emails", "no key", {}, 401, /missing_api_key/],
    ["email", "POST /emails", "a guessed key", { authorization: "Bearer re_local_guess" }, 403, /invalid_api_key/],
    ["chatserver", "GET /api/v10/gateway/bot", "no bot token", {}, 401, /401: Unauthorized/],
    [
      "chatserver",
      "GET /api/v10/gateway/bot",
      "a guessed bot token",
      { authorization: "Bot guess" },
      401,
      /401: Unauthorized/,
    ],
    ["workspace", "POST /api/chat.postMessage", "no token", {}, 200, /"error":"not_authed"/],
    [
      "workspace",
      "POST /api/chat.postMessage",
      "a guessed token",
      { authorization: "Bearer xoxb-guess" },
      200,
      /"error":"invalid_auth"/,
    ],
  ] as const)("%s %s with %s is refused as the provider refuses it", async (fake, call, _, headers, status, body) => {
    const [method, route] = call.split(" ") as [string, string];
    const response = await fetch(`${fakeUrls()[fake]}${route}`, { method, headers });
    expect(response.status).toBe(status);
    expect(await response.text()).toMatch(body);
  });

  const INSPECTIONS = [
    ["email", "GET", "/__fake/outbox"],
    ["email", "GET", "/__fake/sent"],
    ["chatserver", "GET", "/__fake/state"],
    ["chatserver", "GET", "/__fake/recorded"],
    ["workspace", "GET", "/__fake/recorded"],
  ] as const;

  it.each(INSPECTIONS)(
    "%s %s %s: 401 without the operator token, 403 with another, 200 with it",
    async (fake, method, route) => {
      const url = `${fakeUrls()[fake]}${route}`;
      const without = await fetch(url, { method });
      expect(without.status).toBe(401);
      expect(((await without.json()) as { error: { code: string } }).error.code).toBe("operator_token_required");
      const wrong = await fetch(url, { method, headers: { [FAKE_OPERATOR_HEADER]: "0".repeat(64) } });
      expect(wrong.status).toBe(403);
      expect(((await wrong.json()) as { error: { code: string } }).error.code).toBe("operator_token_invalid");
      expect((await fetch(url, { method, headers: { [FAKE_OPERATOR_HEADER]: operatorToken() } })).status).toBe(200);
    },
  );

  it("refuses a forged event (POST /__fake/trigger: a user's message, sent as the chat server) without the operator token", async () => {
    const fakes = fakeUrls();
    const trigger = await fetch(`${fakes.chatserver}/__fake/trigger`, {
      method: "POST",
      body: JSON.stringify({ kind: "message", text: "forged by a tenant" }),
    });
    expect(trigger.status).toBe(401);
    const state = (await (
      await fetch(`${fakes.chatserver}/__fake/state`, { headers: { [FAKE_OPERATOR_HEADER]: operatorToken() } })
    ).json()) as { messages: { content: string }[] };
    expect(state.messages.map((message) => message.content)).not.toContain("forged by a tenant");
  });

  it("keeps the token in the state folder, readable by its owner only, and printed it once at start", () => {
    const token = operatorToken();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(path.join(stateDir, OPERATOR_TOKEN_FILE)).mode & 0o777).toBe(0o600);
    expect(up.output().split(token).length - 1).toBe(1);
    expect(up.output()).toContain(`${FAKE_OPERATOR_HEADER}: ${token}`);
  });
});
