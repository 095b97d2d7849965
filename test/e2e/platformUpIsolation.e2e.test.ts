import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOnLoopback, initProject, launchChromium, loginToUp, removeWorkDir, runCli } from "../support/e2e/index.ts";
import { spawnCli, type StreamingCli, waitForBody } from "../support/e2e/index.ts";

// Issue 30's first attack, replayed by a tenant's own code under `platform up`: its `fetch` of the machine's loopback
// (the fakes' inspection routes, the platform's own port, a port scan) reached everything before the outbound service
// refused it. Ports of this file: 8840.
const PORT = 8840;
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

async function probe(urls: string[]): Promise<Answer[]> {
  const answer = await getOnLoopback(`${PROBE_URL}fetch?urls=${encodeURIComponent(JSON.stringify(urls))}`);
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as Answer[];
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "platform-up-isolation-"));
  stateDir = path.join(tmp, "state");
  up = spawnCli(["up", "--port", String(PORT), "--state", stateDir], { BROWSER: "none" });
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
  await browser?.close();
  const code = await up?.stop("SIGTERM");
  expect(code, up?.output()).toBe(0);
  removeWorkDir(tmp);
});

describe("platform up fences a tenant's own fetch off the machine", () => {
  it("refuses the fakes' inspection routes, the platform's port and a loopback port scan with 403 outbound_refused", async () => {
    const { fakes } = JSON.parse(readFileSync(path.join(stateDir, "plugins.json"), "utf8")) as {
      fakes: Record<string, string>;
    };
    const targets = [
      `${fakes.email}/__fake/outbox`,
      `${fakes.chatserver}/__fake/gateway`,
      `${API}/health`,
      `http://localhost:${PORT}/probe/`,
      // A bounded scan: a few dozen ports around the platform's and the fakes'.
      ...Array.from({ length: 30 }, (_, i) => `http://127.0.0.1:${PORT - 10 + i}/`),
      `http://[::1]:${PORT}/`,
    ];
    const answers = await probe(targets);
    const reached = answers.filter((answer) => answer.status !== 403 || !answer.body.includes('"outbound_refused"'));
    expect(reached, JSON.stringify(reached, null, 2)).toEqual([]);
    expect(answers[0]!.body).toContain("loopback and private addresses are refused");
  });

  it("still serves the project itself and sends its email through the email-send plugin's binding", async () => {
    expect(await getOnLoopback(PROBE_URL)).toEqual({ status: 200, body: "probe ready" });
    const sent = await getOnLoopback(`${PROBE_URL}email`);
    expect(sent.status, sent.body).toBe(200);
    expect((JSON.parse(sent.body) as { id: string }).id).toBeTruthy();
  });
});
