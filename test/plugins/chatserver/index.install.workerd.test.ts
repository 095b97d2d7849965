// The chat-server plugin's install flow through the fake chat server's consent page, the commands
// registered at install, and POST /uninstall.
import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { signedRequest } from "#test/support/workerd/index.ts";
import { APP, browserCookie, commandsIn, deploy, install, PLUGIN, sessionCode, twoProjects } from "./index.fixture.ts";
import { world, type World } from "./index.fixture.ts";

let alpha: ProjectRow;
let beta: ProjectRow;
beforeEach(async () => {
  ({ alpha, beta } = await twoProjects());
});

/** No code was exchanged at the chat server and no server claimed. */
/** How many OAuth connections the project holds. */
const connectionsOf = (projectId: number) =>
  env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections WHERE project_id = ?").bind(projectId).first("n");

async function expectNothingExchangedOrClaimed(w: World) {
  expect(w.fake.recorded().filter((r) => r.path.includes("token"))).toHaveLength(0);
  expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(0);
}

describe("install flow", () => {
  it("claims the server and stores the connection (token sealed); the code works once", async () => {
    const w = world();
    const done = await install(w, alpha.id);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Test Server");
    const resource = await env.DB.prepare("SELECT * FROM plugin_resources").first<any>();
    expect(resource).toMatchObject({
      plugin_id: "chatserver",
      resource_type: "server",
      project_id: alpha.id,
      external_resource_id: TEST_GUILD.id,
      display_name: "Test Server",
    });
    const connection = await env.DB.prepare("SELECT * FROM plugin_oauth_connections").first<any>();
    expect(connection).toMatchObject({
      plugin_id: "chatserver",
      project_id: alpha.id,
      external_user_id: TEST_GUILD.id,
    });
    expect(connection.access_token).toMatch(/^v1\./);

    const code = await sessionCode(alpha.id);
    expect((await w.call(new Request(`${PLUGIN}/install?code=${code}`))).status).toBe(302);
    const again = await w.call(new Request(`${PLUGIN}/install?code=${code}`));
    expect(again.status).toBe(410);
    expect(await again.text()).toContain("already used");
    expect((await w.call(new Request(`${PLUGIN}/install?code=${"0".repeat(64)}`))).status).toBe(404);
    expect(
      (await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(alpha.id, "workspace")}`))).status,
    ).toBe(400);
  });

  it("a bad or missing state is refused and nothing is exchanged or stored", async () => {
    const w = world();
    for (const q of ["code=abc&state=forged", "code=abc", "code=abc&state=" + "x".repeat(40)]) {
      const res = await w.call(new Request(`${PLUGIN}/oauth/callback?${q}`));
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("Install refused");
    }
    await expectNothingExchangedOrClaimed(w);
  });

  it("a callback in another browser (without the install cookie) is refused before the code is exchanged", async () => {
    const w = world();
    const res = await install(w, alpha.id, TEST_GUILD.id, { cookie: false });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("another browser");
    await expectNothingExchangedOrClaimed(w);
  });

  it("Cancel at the consent page installs nothing", async () => {
    const w = world();
    const start = await w.call(new Request(`${PLUGIN}/install?code=${await sessionCode(alpha.id)}`));
    const q = new URL(start.headers.get("location")!).searchParams;
    const form = new URLSearchParams({
      client_id: APP,
      redirect_uri: q.get("redirect_uri")!,
      state: q.get("state")!,
      action: "cancel",
    });
    const back = await w.fakeCall("/oauth2/authorize", { method: "POST", body: form, redirect: "manual" });
    const res = await w.call(new Request(back.headers.get("location")!, { headers: { cookie: browserCookie(start) } }));
    expect(res.status).toBe(400);
    expect(await res.text()).toContain("cancelled");
    expect(res.headers.get("set-cookie")).toContain("Max-Age=0");
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_oauth_connections").first("n")).toBe(0);
  });

  it("a server claimed by another project is refused with 409 and nothing changes; the owner may re-install", async () => {
    const w = world();
    expect((await install(w, alpha.id)).status).toBe(200);
    const refused = await install(w, beta.id);
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain("already connected to another project");
    expect(await env.DB.prepare("SELECT project_id FROM plugin_resources").first("project_id")).toBe(alpha.id);
    expect(await connectionsOf(beta.id)).toBe(0);
    expect((await install(w, alpha.id)).status).toBe(200);
  });
});

describe("commands registered at install", () => {
  it("a server installed after the last deploy has the project's commands when the page says connected, and the page lists them", async () => {
    const w = world();
    await deploy(w, alpha, [{ name: "hello", description: "Say hello" }, "ping"]); // no server yet
    expect(w.fake.recorded().filter((r) => r.method === "PUT")).toHaveLength(0);
    const page = await install(w, alpha.id);
    // Registered before the answer: the fake recorded it by the time the page arrived.
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual(["hello", "ping"]);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("connected");
    expect(html).toContain("Commands registered: /hello, /ping.");
    // The next deploy with the same commands changes nothing there.
    await deploy(w, alpha, [{ name: "hello", description: "Say hello" }, "ping"]);
    expect(w.fake.recorded().filter((r) => r.method === "PUT")).toHaveLength(1);
  });

  it("before any deploy the page says the commands come with the first deploy; another project's manifest is not used", async () => {
    const w = world();
    await deploy(w, beta, ["beta-only"]);
    const page = await install(w, alpha.id);
    expect(await page.text()).toContain("has not deployed yet");
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual([]);
  });
});

describe("POST /uninstall", () => {
  it("removes the bot's commands from every server, deletes the connection and releases the servers: another project installs there", async () => {
    const w = world();
    await deploy(w, alpha, ["hello"]);
    await install(w, alpha.id);
    await install(w, alpha.id, OTHER_GUILD.id);
    expect((await install(w, beta.id)).status).toBe(409);
    const res = await w.call(await signedRequest({ project: alpha, path: "/uninstall", body: "{}", origin: PLUGIN }));
    expect(res.status, await res.clone().text()).toBe(200);
    const report = (await res.json()) as any;
    expect(report.connectionDeleted).toBe(true);
    expect(report.released.map((r: any) => r.externalId).sort()).toEqual([TEST_GUILD.id, OTHER_GUILD.id].sort());
    expect(report.atProvider.filter((s: string) => s.startsWith("Removed the bot's commands"))).toHaveLength(2);
    expect(await commandsIn(w, TEST_GUILD.id)).toEqual([]);
    expect(await commandsIn(w, OTHER_GUILD.id)).toEqual([]);
    expect(await connectionsOf(alpha.id)).toBe(0);
    expect((await install(w, beta.id)).status).toBe(200);
  });

  it("refuses a forged token; a project with nothing installed gets 404", async () => {
    const w = world();
    await install(w, alpha.id);
    const forged = await signedRequest({ project: alpha, path: "/uninstall", body: "{}", origin: PLUGIN, secret: "x" });
    expect((await w.call(forged)).status).toBe(401);
    const nothing = await w.call(
      await signedRequest({ project: beta, path: "/uninstall", body: "{}", origin: PLUGIN }),
    );
    expect(nothing.status).toBe(404);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM plugin_resources").first("n")).toBe(1);
  });
});
