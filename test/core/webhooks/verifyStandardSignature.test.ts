import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { verifyStandardSignature } from "../../../src/core/webhooks/verifyStandardSignature.ts";

const SECRET = `whsec_${Buffer.from("a standard webhooks key of 32 b!").toString("base64")}`;
const NOW_S = 1_780_000_000;
const BODY = JSON.stringify({ type: "invoice.paid", data: { id: "inv_1" } });

function headers(options: { id?: string; timestampS?: number; secret?: string; body?: string } = {}) {
  const id = options.id ?? "msg_1";
  const timestampS = options.timestampS ?? NOW_S;
  const signature = new Webhook(options.secret ?? SECRET).sign(id, new Date(timestampS * 1000), options.body ?? BODY);
  return { "webhook-id": id, "webhook-timestamp": String(timestampS), "webhook-signature": signature };
}

function check(given: Record<string, string>, body = BODY, secret = SECRET) {
  return verifyStandardSignature(secret, {
    headers: new Headers(given),
    body: new TextEncoder().encode(body),
    nowMS: NOW_S * 1000,
  });
}

describe("verifyStandardSignature (against the standardwebhooks package)", () => {
  it("accepts a delivery signed by Webhook.sign", async () => {
    expect(await check(headers())).toEqual({ ok: true });
  });

  it("accepts a list of signatures when one matches", async () => {
    const given = headers();
    given["webhook-signature"] = `v1,${Buffer.alloc(32).toString("base64")} ${given["webhook-signature"]}`;
    expect(await check(given)).toEqual({ ok: true });
  });

  it.each([
    { name: "no headers", given: {}, body: BODY, secret: SECRET, reason: "missing" },
    {
      name: "no v1 signature",
      given: { ...headers(), "webhook-signature": "v2,abc" },
      body: BODY,
      secret: SECRET,
      reason: "malformed",
    },
    {
      name: "tampered body",
      given: headers(),
      body: BODY.replace("inv_1", "inv_2"),
      secret: SECRET,
      reason: "bad_signature",
    },
    {
      name: "wrong secret",
      given: headers({ secret: `whsec_${Buffer.from("another key").toString("base64")}` }),
      body: BODY,
      secret: SECRET,
      reason: "bad_signature",
    },
    {
      name: "another id (signed content includes it)",
      given: { ...headers(), "webhook-id": "msg_2" },
      body: BODY,
      secret: SECRET,
      reason: "bad_signature",
    },
    {
      name: "10 minutes old",
      given: headers({ timestampS: NOW_S - 600 }),
      body: BODY,
      secret: SECRET,
      reason: "stale",
    },
    { name: "a secret that is not base64", given: headers(), body: BODY, secret: "whsec_!!!", reason: "bad_secret" },
  ])("refuses $name: $reason", async ({ given, body, secret, reason }) => {
    expect(await check(given, body, secret)).toMatchObject({ ok: false, reason });
  });
});
