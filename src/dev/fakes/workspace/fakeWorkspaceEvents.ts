/**
 * What the fake workspace delivers to the plugin, signed as Slack signs it (v0 HMAC of the timestamp and
 * body): Events API envelopes (a message, a mention, a reaction, an uninstall), their retries, and
 * interactivity payloads (form bodies `payload=<JSON>`).
 */
import { hex, randomHex } from "../../../core/crypto/encoding.ts";
import { importKey } from "../../../core/crypto/keys.ts";
import type { createWorkspaceMessages } from "./fakeWorkspaceMessages.ts";
import { FAKE_USER_ID, type TeamInfo } from "./fakeWorkspaceTeam.ts";

/** Where and how deliveries go: the plugin's Events API endpoint, signed with the app's signing secret. */
export interface FakeWorkspaceDelivery {
  signingSecret: string;
  /** Full URL of the plugin's Events API endpoint, e.g. http://127.0.0.1:8790/webhook. */
  webhookUrl: string;
  /** How deliveries reach the plugin (a service binding in tests); default: global fetch. */
  deliver?: (request: Request) => Promise<Response>;
}

/** What the plugin answered a delivery. */
export interface DeliveryResponse {
  status: number;
  body: string;
  contentType: string | null;
}

async function hmacHex(secret: string, data: string): Promise<string> {
  return hex(await crypto.subtle.sign("HMAC", await importKey(secret, "HMAC-SHA256"), new TextEncoder().encode(data)));
}

export function createWorkspaceEvents(
  config: FakeWorkspaceDelivery,
  apiAppId: string,
  now: () => number,
  messages: ReturnType<typeof createWorkspaceMessages>,
) {
  let lastDelivery: { envelope: Record<string, unknown>; retries: number } | null = null;
  const { nextTs, userMessage } = messages;

  /** The event of `kind` (a message its user posts, a mention, a reaction, ...), or null for a kind it has none of. */
  function buildEvent(kind: string, team: TeamInfo, text: string, channel: string): Record<string, unknown> | null {
    const eventTs = nextTs();
    switch (kind) {
      case "message": {
        const m = userMessage(team.id, channel, text);
        return { type: "message", channel, user: m.user, text, ts: m.ts, event_ts: m.ts, channel_type: "channel" };
      }
      case "mention": {
        const full = `<@${team.botUserId}> ${text}`;
        const m = userMessage(team.id, channel, full);
        return { type: "app_mention", channel, user: m.user, text: full, ts: m.ts, event_ts: m.ts };
      }
      case "reaction": {
        const m = userMessage(team.id, channel, "a message to react to");
        return {
          type: "reaction_added",
          user: FAKE_USER_ID,
          reaction: text || "thumbsup",
          item_user: m.user,
          item: { type: "message", channel, ts: m.ts },
          event_ts: eventTs,
        };
      }
      case "app_uninstalled":
        return { type: "app_uninstalled", event_ts: eventTs };
      case "tokens_revoked":
        return { type: "tokens_revoked", tokens: { oauth: [], bot: [team.botUserId] }, event_ts: eventTs };
      default:
        return null;
    }
  }

  async function deliver(
    body: string,
    retryNum: number,
    contentType = "application/json",
  ): Promise<{ status: number; body: string; contentType: string | null }> {
    const ts = String(Math.floor(now() / 1000));
    const signature = "v0=" + (await hmacHex(config.signingSecret, `v0:${ts}:${body}`));
    const headers: Record<string, string> = {
      "content-type": contentType,
      "X-Slack-Request-Timestamp": ts,
      "X-Slack-Signature": signature,
      "User-Agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
    };
    if (retryNum > 0) {
      headers["X-Slack-Retry-Num"] = String(retryNum);
      headers["X-Slack-Retry-Reason"] = "http_timeout";
    }
    const request = new Request(config.webhookUrl, { method: "POST", headers, body });
    const response = await (config.deliver ? config.deliver(request) : fetch(request));
    return { status: response.status, body: await response.text(), contentType: response.headers.get("content-type") };
  }

  return {
    /** Delivers a body as it stands (a url_verification). */
    deliver: (body: string) => deliver(body, 0),
    buildEvent,
    /** Wraps `event` of `team` in an Events API envelope and delivers it; a retry redelivers it. */
    async deliverEvent(team: TeamInfo, event: Record<string, unknown>) {
      const envelope: Record<string, unknown> = {
        token: "fake-verification-token",
        team_id: team.id,
        api_app_id: apiAppId,
        event,
        type: "event_callback",
        event_id: `Ev${randomHex(5).toUpperCase()}`,
        event_time: Math.floor(now() / 1000),
        authorizations: [
          {
            enterprise_id: null,
            team_id: team.id,
            user_id: team.botUserId,
            is_bot: true,
            is_enterprise_install: false,
          },
        ],
        is_ext_shared_channel: false,
      };
      lastDelivery = { envelope, retries: 0 };
      const delivered = await deliver(JSON.stringify(envelope), 0);
      return { delivered: envelope, response: delivered };
    },
    /** Redelivers the last envelope as Slack retries one (`X-Slack-Retry-Num`), or null when none was delivered. */
    async retry(retryNum: number) {
      if (!lastDelivery) return null;
      lastDelivery.retries = retryNum;
      const delivered = await deliver(JSON.stringify(lastDelivery.envelope), retryNum);
      return { delivered: lastDelivery.envelope, retryNum, response: delivered };
    },
    /** Signs and delivers an interactivity payload as Slack does: a form body `payload=<JSON>`. */
    interactivity(payload: Record<string, unknown>): Promise<DeliveryResponse> {
      const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
      return deliver(body, 0, "application/x-www-form-urlencoded");
    },
    reset(): void {
      lastDelivery = null;
    },
  };
}
