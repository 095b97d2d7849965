import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { verifyStripeSignature } from "../../../src/core/webhooks/verifyStripeSignature.ts";

const stripe = new Stripe("sk_test_unused");
const SECRET = "whsec_test_secret_for_the_platform";
const NOW_S = 1_780_000_000;
const BODY = JSON.stringify({ id: "evt_1", type: "checkout.session.completed", data: { object: { id: "cs_1" } } });

function header(options: { payload?: string; secret?: string; timestamp?: number } = {}): string {
  return stripe.webhooks.generateTestHeaderString({
    payload: options.payload ?? BODY,
    secret: options.secret ?? SECRET,
    timestamp: options.timestamp ?? NOW_S,
  });
}

function check(signature: string | null, body = BODY, nowS = NOW_S) {
  const headers = new Headers(signature === null ? {} : { "Stripe-Signature": signature });
  return verifyStripeSignature(SECRET, { headers, body: new TextEncoder().encode(body), nowMS: nowS * 1000 });
}

describe("verifyStripeSignature (against the stripe package's own signing)", () => {
  it("accepts a delivery signed by stripe.webhooks.generateTestHeaderString", async () => {
    expect(await check(header())).toEqual({ ok: true });
  });

  it("accepts a header with a second v1 (a secret being rolled) when one matches", async () => {
    const rolled = `${header()},v1=${"0".repeat(64)}`;
    expect(await check(rolled)).toEqual({ ok: true });
  });

  it.each([
    { name: "no header", signature: null, body: BODY, nowS: NOW_S, reason: "missing" },
    { name: "no v1", signature: `t=${NOW_S}`, body: BODY, nowS: NOW_S, reason: "malformed" },
    { name: "no t", signature: `v1=${"a".repeat(64)}`, body: BODY, nowS: NOW_S, reason: "malformed" },
    {
      name: "tampered body",
      signature: header(),
      body: BODY.replace("cs_1", "cs_2"),
      nowS: NOW_S,
      reason: "bad_signature",
    },
    {
      name: "wrong secret",
      signature: header({ secret: "whsec_other" }),
      body: BODY,
      nowS: NOW_S,
      reason: "bad_signature",
    },
    { name: "10 minutes old", signature: header({ timestamp: NOW_S - 600 }), body: BODY, nowS: NOW_S, reason: "stale" },
    { name: "301 s old", signature: header({ timestamp: NOW_S - 301 }), body: BODY, nowS: NOW_S, reason: "stale" },
    {
      name: "10 minutes ahead",
      signature: header({ timestamp: NOW_S + 600 }),
      body: BODY,
      nowS: NOW_S,
      reason: "stale",
    },
    {
      name: "v0 only (not the v1 scheme)",
      signature: header().replace("v1=", "v0="),
      body: BODY,
      nowS: NOW_S,
      reason: "malformed",
    },
  ])("refuses $name: $reason", async ({ signature, body, nowS, reason }) => {
    const result = await check(signature, body, nowS);
    expect(result).toMatchObject({ ok: false, reason });
  });

  it("accepts a timestamp exactly 300 s old", async () => {
    expect(await check(header({ timestamp: NOW_S - 300 }))).toEqual({ ok: true });
  });
});
