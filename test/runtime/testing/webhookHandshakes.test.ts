// Slack and Discord webhook triggers through the test kit, against hand-computed vectors: Slack's
// published example request, Slack's URL check (signed here with node:crypto, an implementation
// independent of the platform's WebCrypto), and Ed25519 signatures made once with the RFC 8032
// test key. Each provider's endpoint check is answered by the platform and starts nothing.
import { createHmac } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { webhook, workflow } from "platform";
import { testRequest } from "platform/testing";
import { webhookHost } from "#src/runtime/webhooks/webhookDelivery.ts";

const SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const SLACK_TIMESTAMP = "1531420618";
const SLACK_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SLACK_SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";

const DISCORD_KEY = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const DISCORD_TIMESTAMP = "1780000000";
const DISCORD = {
  ping: {
    body: '{"id":"1234567890","type":1}',
    signature:
      "3dbe59b424983654e1176338eb25932aa1a3d49dbcda6411d77ce6c736dfbab1f366727ecab98268e76958c3a94fe859f2f859550e9e2e6b7373196f1ffdec01",
  },
  eventsPing: {
    body: '{"version":1,"application_id":"42","type":0}',
    signature:
      "f18e89a13256301b4ad0897d4086fbdfc4c0927142443a35096b7fff9528700a97cc3bb8f3cf8f9b4ce5d55e8d124eac6a4c99df061db9fd0e2f3adc17cfc50b",
  },
  command: {
    body: '{"id":"987","type":2,"data":{"name":"ship"}}',
    signature:
      "6f25dc1f0512466a9b76a5e78af33c4c7746b502c897ff8a1e831bab51214200fd3abd572137eeff2b885faf2542968b247a3ab7500c660478ea31f11b0a0504",
  },
};

workflow("slash", { start: async (ctx) => ({ done: true, result: ctx.data }) });
webhook("slack-commands", {
  verify: "slack",
  secret: "SLACK_SIGNING_SECRET",
  route: (payload) => {
    const { command, user_name } = payload as { command: string; user_name: string };
    return { start: { workflow: "slash", data: { command, user: user_name } } };
  },
});
webhook("discord-interactions", { verify: "discord", secret: "DISCORD_PUBLIC_KEY", start: "slash" });

const ENV = { SLACK_SIGNING_SECRET: SLACK_SECRET, DISCORD_PUBLIC_KEY: DISCORD_KEY };
const project = { fetch: () => new Response("the project's own answer") };
const saved = webhookHost.clock;
afterEach(() => {
  webhookHost.clock = saved;
});

function post(path: string, body: string, headers: Record<string, string>, nowS: string) {
  webhookHost.clock = () => Number(nowS) * 1000;
  return testRequest(project, path, { method: "POST", body, headers, env: ENV });
}

const slack = (body: string, signature: string, contentType: string) =>
  post(
    "/__platform/webhooks/slack-commands",
    body,
    { "content-type": contentType, "x-slack-signature": signature, "x-slack-request-timestamp": SLACK_TIMESTAMP },
    SLACK_TIMESTAMP,
  );

const discord = (vector: { body: string; signature: string }, body = vector.body) =>
  post(
    "/__platform/webhooks/discord-interactions",
    body,
    {
      "content-type": "application/json",
      "x-signature-ed25519": vector.signature,
      "x-signature-timestamp": DISCORD_TIMESTAMP,
    },
    DISCORD_TIMESTAMP,
  );

describe("slack", () => {
  it("Slack's example slash command: verified, its form fields routed into a run", async () => {
    const response = await slack(SLACK_BODY, SLACK_SIGNATURE, "application/x-www-form-urlencoded");
    expect(response.status).toBe(200);
    expect(response.runs).toHaveLength(1);
    expect(await response.runs[0]!.result()).toEqual({ command: "/webhook-collect", user: "roadrunner" });
  });

  it("the same request with one field changed: 401, nothing started", async () => {
    const response = await slack(
      SLACK_BODY.replace("roadrunner", "coyote"),
      SLACK_SIGNATURE,
      "application/x-www-form-urlencoded",
    );
    expect(response.status).toBe(401);
    expect(response.runs).toHaveLength(0);
  });

  it("the Events API's url_verification is answered with its challenge, the project never called", async () => {
    const body = JSON.stringify({
      token: "t",
      challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
      type: "url_verification",
    });
    const signature = `v0=${createHmac("sha256", SLACK_SECRET).update(`v0:${SLACK_TIMESTAMP}:${body}`).digest("hex")}`;
    const response = await slack(body, signature, "application/json");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    expect(response.runs).toHaveLength(0);
  });
});

describe("discord", () => {
  it("an interaction (type 2) starts one run with the parsed body; sent again, answers the same run", async () => {
    const first = await discord(DISCORD.command);
    expect(first.status).toBe(200);
    const answer = (await first.json()) as { delivery: string; runId: string; created: boolean };
    expect(answer).toMatchObject({ delivery: "987", created: true });
    expect(await first.runs[0]!.result()).toEqual({
      event: { id: "987", type: 2, data: { name: "ship" } },
      headers: { "x-signature-timestamp": DISCORD_TIMESTAMP },
    });
    const again = await discord(DISCORD.command);
    expect(await again.json()).toEqual({ delivery: "987", runId: answer.runId, created: false });
    expect(again.runs).toHaveLength(0);
  });

  it.each([
    { name: "interactions PING (type 1)", vector: DISCORD.ping, status: 200, answer: '{"type":1}' },
    { name: "webhook events PING (type 0)", vector: DISCORD.eventsPing, status: 204, answer: "" },
  ])("$name is answered $status by the platform, nothing started", async ({ vector, status, answer }) => {
    const response = await discord(vector);
    expect(response.status).toBe(status);
    expect(await response.text()).toBe(answer);
    expect(response.runs).toHaveLength(0);
  });

  it("a PING whose body was changed is refused 401", async () => {
    const response = await discord(DISCORD.ping, DISCORD.ping.body.replace("1234567890", "1234567891"));
    expect(response.status).toBe(401);
  });
});
