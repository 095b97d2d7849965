import { describe, expect, it } from "vitest";
import { verifySlackSignature } from "../../../src/core/webhooks/verifySlackSignature.ts";

// Slack's published example (api.slack.com/authentication/verifying-requests-from-slack).
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const TIMESTAMP = "1531420618";
const BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SIGNATURE = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const NOW_MS = Number(TIMESTAMP) * 1000;

function check(given: Record<string, string>, body = BODY, nowMS = NOW_MS) {
  return verifySlackSignature(SECRET, { headers: new Headers(given), body: new TextEncoder().encode(body), nowMS });
}

const SIGNED = { "X-Slack-Signature": SIGNATURE, "X-Slack-Request-Timestamp": TIMESTAMP };

describe("verifySlackSignature (Slack's published vector)", () => {
  it("accepts Slack's example request", async () => {
    expect(await check(SIGNED)).toEqual({ ok: true });
  });

  it.each([
    {
      name: "no signature",
      given: { "X-Slack-Request-Timestamp": TIMESTAMP },
      body: BODY,
      nowMS: NOW_MS,
      reason: "missing",
    },
    {
      name: "no v0 prefix",
      given: { ...SIGNED, "X-Slack-Signature": SIGNATURE.slice(3) },
      body: BODY,
      nowMS: NOW_MS,
      reason: "malformed",
    },
    {
      name: "tampered body",
      given: SIGNED,
      body: BODY.replace("roadrunner", "coyote"),
      nowMS: NOW_MS,
      reason: "bad_signature",
    },
    {
      name: "another timestamp",
      given: { ...SIGNED, "X-Slack-Request-Timestamp": "1531420619" },
      body: BODY,
      nowMS: NOW_MS,
      reason: "bad_signature",
    },
    { name: "10 minutes old", given: SIGNED, body: BODY, nowMS: NOW_MS + 600_000, reason: "stale" },
  ])("refuses $name: $reason", async ({ given, body, nowMS, reason }) => {
    expect(await check(given, body, nowMS)).toMatchObject({ ok: false, reason });
  });
});
