// The chat-server plugin's POST /deploy (the project's commands on every server it claimed) and the
// Gateway relay it starts on an install or a deploy.
import { beforeEach, describe, expect, it } from "vitest";
import { OTHER_GUILD, TEST_GUILD } from "#src/dev/fakes/chatserver/fakeChatServer.ts";
import { problemForClose, type RelayProblem } from "#src/plugins/chatserver/gatewayRelay/relayProblem.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import { signedRequest } from "#test/support/workerd/index.ts";
import { install, PLUGIN, twoProjects, world, type World } from "./index.fixture.ts";

let alpha: ProjectRow;
let beta: ProjectRow;
beforeEach(async () => {
  ({ alpha, beta } = await twoProjects());
});

describe("starting the Gateway relay", () => {
  /** A GATEWAY_RELAY namespace that records which relay was asked to start, for which shard. */
  function relayStub(w: World, shards?: string, problem: RelayProblem | null = null) {
    const pokes: [string, unknown][] = [];
    Object.assign(w.env, {
      CHATSERVER_GATEWAY_SHARDS: shards,
      GATEWAY_RELAY: {
        idFromName: (name: string) => name,
        get: (name: string) => ({
          start: async (shard: unknown) => {
            pokes.push([name, shard]);
            return problem
              ? { phase: "stopped", connected: false, problem }
              : { phase: "connecting", connected: false };
          },
        }),
      },
    });
    return pokes;
  }

  it("a completed install starts it; a refused one does not", async () => {
    const w = world();
    const pokes = relayStub(w);
    expect((await install(w, alpha.id)).status).toBe(200);
    expect(pokes).toEqual([["shard-0-of-1", [0, 1]]]);
    expect((await install(w, beta.id)).status).toBe(409);
    expect(pokes).toHaveLength(1);
  });

  it("a deploy starts every shard's relay; a refused deploy none", async () => {
    const w = world();
    const pokes = relayStub(w, "2");
    const body = JSON.stringify({ commands: ["hello"] });
    expect((await w.call(await signedRequest({ project: alpha, path: "/deploy", body, origin: PLUGIN }))).status).toBe(
      200,
    );
    expect(pokes).toEqual([
      ["shard-0-of-2", [0, 2]],
      ["shard-1-of-2", [1, 2]],
    ]);
    const forged = await signedRequest({
      project: alpha,
      path: "/deploy",
      body,
      secret: "f".repeat(64),
      origin: PLUGIN,
    });
    expect((await w.call(forged)).status).toBe(401);
    expect(pokes).toHaveLength(2);
  });

  it("POST /gateway/start answers each shard's phase (no binding: no shards)", async () => {
    const bare = world();
    const none = await bare.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await none.json()).toEqual({ shards: [] });
    const w = world();
    relayStub(w);
    const res = await w.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await res.json()).toEqual({ shards: [{ phase: "connecting", connected: false, problem: null }] });
    const stopped = world();
    const problem = problemForClose(4014, "Disallowed intent(s).");
    relayStub(stopped, undefined, problem);
    const told = await stopped.call(new Request(`${PLUGIN}/gateway/start`, { method: "POST" }));
    expect(await told.json()).toEqual({ shards: [{ phase: "stopped", connected: false, problem }] });
  });
});

describe("POST /deploy", () => {
  it("registers the project's commands on every server it claimed, with the bot token", async () => {
    const w = world();
    await install(w, alpha.id);
    await install(w, alpha.id, OTHER_GUILD.id);
    const body = JSON.stringify({
      plugins: {
        chatserver: { commands: [{ name: "hello", description: "Say hello" }, { name: "ping" }], events: ["message"] },
      },
    });
    const res = await w.call(await signedRequest({ project: alpha, path: "/deploy", body, origin: PLUGIN }));
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as any).servers.map((s: any) => s.id).sort()).toEqual(
      [TEST_GUILD.id, OTHER_GUILD.id].sort(),
    );
    const puts = w.fake.recorded().filter((r) => r.method === "PUT");
    expect(puts).toHaveLength(2);
    expect(puts.every((p) => p.auth === "Bot bot-token" && p.status === 200)).toBe(true);
    const state = (await (await w.fakeCall("/__fake/state")).json()) as any;
    expect(state.commands[TEST_GUILD.id].map((c: any) => c.name)).toEqual(["hello", "ping"]);
  });

  it("a deploy that changes nothing makes no call; a changed set or a re-install registers again", async () => {
    const w = world();
    await install(w, alpha.id);
    const deploy = async (commands: unknown[]) => {
      const res = await w.call(
        await signedRequest({ project: alpha, path: "/deploy", body: JSON.stringify({ commands }), origin: PLUGIN }),
      );
      expect(res.status, await res.clone().text()).toBe(200);
      return ((await res.json()) as any).servers[0].changed as boolean;
    };
    const puts = () => w.fake.recorded().filter((r) => r.method === "PUT").length;
    expect(await deploy(["hello"])).toBe(true);
    expect(await deploy(["hello"])).toBe(false);
    expect(puts()).toBe(1);
    expect(await deploy(["hello", "ping"])).toBe(true);
    expect(await deploy([])).toBe(true); // dropping every command clears them at the chat server
    expect(((await (await w.fakeCall("/__fake/state")).json()) as any).commands[TEST_GUILD.id]).toEqual([]);
    await install(w, alpha.id);
    expect(await deploy([])).toBe(true);
    expect(puts()).toBe(4);
  });

  it("refuses a bad identity token and invalid command names", async () => {
    const w = world();
    const body = JSON.stringify({ commands: ["hello"] });
    expect(
      (
        await w.call(
          await signedRequest({ project: alpha, path: "/deploy", body, secret: "f".repeat(64), origin: PLUGIN }),
        )
      ).status,
    ).toBe(401);
    expect(
      (
        await w.call(
          await signedRequest({
            project: alpha,
            path: "/deploy",
            body: JSON.stringify({ commands: ["Bad Name"] }),
            origin: PLUGIN,
          }),
        )
      ).status,
    ).toBe(400);
  });
});
