import { mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getOnLoopback, initProject, launchChromium, loginToUp, removeWorkDir, runCli } from "../support/e2e/index.ts";
import { spawnCli, type StreamingCli, waitForBody } from "../support/e2e/index.ts";

// The attacks of the third security review, replayed against `platform up` as a hostile tenant (bob, an ordinary
// signed-in user) would: each one here failed before `platform up` isolated its tenants. Ports of this file: 8820.
const PORT = 8820;
const API = `http://127.0.0.1:${PORT}`;
const NEIGHBOUR_URL = `http://neighbour.localhost:${PORT}/`;
const ATTACKER_URL = `http://attacker.localhost:${PORT}/`;

const answering = (text: string) => `import { Router } from "itty-router";
const router = Router();
router.get("/", () => new Response(${JSON.stringify(text)}));
export default router;
`;

/** A private project whose page shows whatever its origin's sessionStorage holds. */
const STEALER = `import { Router } from "itty-router";
const router = Router();
router.get("/", () => new Response(
  '<!doctype html><title>prize</title><body><script>document.body.textContent = "STOLEN:" + JSON.stringify({ ...sessionStorage });</script></body>',
  { headers: { "content-type": "text/html" } },
));
export default router;
`;

interface Tenant {
  env: NodeJS.ProcessEnv;
  token: string;
}

let tmp: string;
let stateDir: string;
let up: StreamingCli;
let browser: Browser;
let ada: Tenant;
let bob: Tenant;

function startUp(): Promise<StreamingCli> {
  const started = spawnCli(["up", "--port", String(PORT), "--state", stateDir], { BROWSER: "none" });
  return started.waitFor(new RegExp(`Platform on ${API}`)).then(() => started);
}

async function tenant(name: string, email: string): Promise<Tenant> {
  const env = {
    XDG_CONFIG_HOME: path.join(tmp, `config-${name}`),
    PLATFORM_TOKEN: "",
    PLATFORM_API_URL: "",
    BROWSER: "none",
  };
  return { env, token: await loginToUp(browser, API, env, email) };
}

async function push(who: Tenant, slug: string, source: string, ...flags: string[]) {
  const dir = path.join(tmp, `${slug}-${Math.random().toString(36).slice(2)}`);
  await initProject(dir, source);
  const pushed = await runCli(["push", dir, "--slug", slug, ...flags], { env: who.env, timeoutMS: 120_000 });
  expect(pushed.code, pushed.stdout + pushed.stderr).toBe(0);
  return pushed;
}

async function api(who: Tenant, method: string, pathname: string, body?: unknown) {
  const response = await fetch(API + pathname, {
    method,
    headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as { error?: { code: string; message: string } } };
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), "platform-up-tenants-"));
  stateDir = path.join(tmp, "state");
  up = await startUp();
  browser = await launchChromium();
  ada = await tenant("ada", "ada@example.com");
  bob = await tenant("bob", "bob@other.org");
  await push(ada, "neighbour", answering("neighbour answers"));
  await push(bob, "attacker", answering("attacker v1"));
  await waitForBody(NEIGHBOUR_URL, /^neighbour answers$/);
  await waitForBody(ATTACKER_URL, /^attacker v1$/);

  // platform up, a browser sign-in and pushes: minutes on a loaded 2-core machine, not a bound on speed.
}, 360_000);

afterAll(async () => {
  await browser?.close();
  const code = await up?.stop("SIGTERM");
  expect(code, up?.output()).toBe(0);
  removeWorkDir(tmp);
});

describe("platform up keeps its tenants apart", () => {
  it("refuses a bundle that cannot start in Cloudflare's words, and the neighbour answers every request during and after the pushes", async () => {
    let pushing = true;
    const seen: string[] = [];
    const hammer = (async () => {
      while (pushing) {
        const answer = await getOnLoopback(NEIGHBOUR_URL).then(
          ({ status, body }) => `${status} ${body}`,
          (error: unknown) => String(error),
        );
        seen.push(answer);
      }
    })();

    // The review's attack: this took the API, the login worker and every project down.
    const broken = await api(bob, "PUT", "/projects/attacker/deployment", {
      bundle: "this is not javascript(",
      metadata: {},
    });
    // The user's own error, not Cloudflare's: 400 invalid_input with Cloudflare's words (a client retrying 5xx would loop).
    expect(broken.status).toBe(400);
    expect(broken.json.error).toEqual({
      code: "invalid_input",
      message: expect.stringMatching(
        /^Cloudflare refused the upload of proj-attacker: Uncaught SyntaxError: Unexpected identifier 'is'/,
      ),
    });
    // An accepted push swaps only the attacker's own workerd.
    await push(bob, "attacker", answering("attacker v2"));
    expect((await getOnLoopback(ATTACKER_URL)).body).toBe("attacker v2");
    pushing = false;
    await hammer;

    expect(seen.length).toBeGreaterThan(0);
    expect(
      seen.filter((answer) => answer !== "200 neighbour answers"),
      `${seen.length} requests`,
    ).toEqual([]);
    console.log(`The neighbour answered all ${seen.length} requests made during the two pushes.`);
    expect((await fetch(`${API}/health`)).status).toBe(200);
  });

  it("restarts on the same state folder, skipping with a line the kept script that no longer starts", async () => {
    // What a platform that accepted anything kept: the script that failed every later start.
    writeFileSync(path.join(stateDir, "scripts", "proj-attacker", "upload", "module-0"), "this is not javascript(");
    expect(await up.stop("SIGTERM"), up.output()).toBe(0);
    up = await startUp();
    expect(up.output()).toMatch(
      /Skipped the saved script proj-attacker: Cloudflare's checks refuse it now: Uncaught SyntaxError: Unexpected identifier 'is'/,
    );
    expect(await getOnLoopback(NEIGHBOUR_URL)).toEqual({ status: 200, body: "neighbour answers" });
    expect((await getOnLoopback(ATTACKER_URL)).status).toBe(502);
    await push(bob, "attacker", answering("attacker v3"));
    expect((await getOnLoopback(ATTACKER_URL)).body).toBe("attacker v3");
  });

  it("never serves a project on the console's origin, so a private page cannot read the console's token (Chromium)", async () => {
    await push(bob, "stealer", STEALER, "--private");
    const page = await browser.newPage();
    await page.goto(`${API}/console/#token=${ada.token}`);
    await page.getByText("Signed in as ada@example.com").waitFor();
    const held = () => page.evaluate(() => sessionStorage.getItem("platform-console-token"));
    expect(await held()).toBe(ada.token);

    // The review's attack: the same tab opens the attacker's private page on the API's origin.
    const onApiOrigin = await page.goto(`${API}/stealer/`);
    expect(onApiOrigin!.status()).toBe(404);
    expect(await page.locator("body").textContent()).not.toContain("STOLEN");
    // Where the private project lives, its script runs, and finds nothing of the console's.
    await page.goto(`http://localhost:${PORT}/stealer/`);
    await expect.poll(() => page.locator("body").textContent()).toBe("STOLEN:{}");
    // The console's origin still holds the token: it was there to steal, had the origins been one.
    await page.goto(`${API}/console/`);
    await page.getByText("Signed in as ada@example.com").waitFor();
    expect(await held()).toBe(ada.token);
    await page.close();
  });

  it("answers only the deployed API's routes: platform dev's routes are not there", async () => {
    for (const [method, pathname, body] of [
      ["PUT", "/projects/security/local", { private: false }],
      ["PUT", "/projects/attacker/local", { private: true }],
      ["GET", "/projects/attacker/outbox", undefined],
      ["POST", "/projects/attacker/plugins/chatserver/test-events", { kind: "message", text: "hi" }],
    ] as const) {
      const answer = await api(bob, method, pathname, body);
      expect({ method, pathname, ...answer }).toEqual({
        method,
        pathname,
        status: 404,
        json: { error: { code: "not_found", message: `No route for ${method} ${pathname}.` } },
      });
    }
    const project = await api(bob, "GET", "/projects/attacker");
    expect(project.json).toMatchObject({ project: { slug: "attacker", private: false } });
  });

  // The review created `security` (which then mailed as security@…), `postmaster`, `sso`, … and `projects`/`health`.
  const REVIEWED = "security postmaster abuse noreply chatserver email-send sso mailer-daemon ftp cli projects health";
  it.each(REVIEWED.split(" "))("creates no project named %s through the API", async (slug) => {
    const created = await api(bob, "POST", "/projects", { slug });
    expect(created.status).toBe(400);
    expect(created.json.error!.message).toBe(
      `"${slug}" is reserved (RFC 2142 role names, sign-in and platform names cannot be project slugs).`,
    );
  });

  it.each(["security", "health"])("creates no project named %s through `platform push`", async (slug) => {
    const dir = path.join(tmp, `reserved-${slug}`);
    await initProject(dir, answering("mine"));
    const pushed = await runCli(["push", dir, "--slug", slug], { env: bob.env, timeoutMS: 120_000 });
    expect(pushed.code).toBe(1);
    expect(pushed.stderr).toContain(`"${slug}" is reserved`);
    expect((await api(bob, "GET", `/projects/${slug}`)).status).toBe(404);
  });
});
