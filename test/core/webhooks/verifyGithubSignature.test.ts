import { sign } from "@octokit/webhooks-methods";
import { describe, expect, it } from "vitest";
import { verifyGithubSignature } from "../../../src/core/webhooks/verifyGithubSignature.ts";

const SECRET = "github-webhook-secret";
const BODY = JSON.stringify({ action: "opened", pull_request: { number: 7 } });

function check(signature: string | null, body = BODY) {
  const headers = new Headers(signature === null ? {} : { "X-Hub-Signature-256": signature });
  return verifyGithubSignature(SECRET, { headers, body: new TextEncoder().encode(body), nowMS: 0 });
}

describe("verifyGithubSignature (against @octokit/webhooks-methods)", () => {
  it("accepts a body signed by @octokit/webhooks-methods sign", async () => {
    expect(await check(await sign(SECRET, BODY))).toEqual({ ok: true });
  });

  it.each([
    { name: "no header", signature: async () => null, body: BODY, reason: "missing" },
    { name: "sha1 form", signature: async () => `sha1=${"a".repeat(40)}`, body: BODY, reason: "malformed" },
    { name: "tampered body", signature: () => sign(SECRET, BODY), body: `${BODY} `, reason: "bad_signature" },
    { name: "wrong secret", signature: () => sign("other", BODY), body: BODY, reason: "bad_signature" },
  ])("refuses $name: $reason", async ({ signature, body, reason }) => {
    expect(await check(await signature(), body)).toMatchObject({ ok: false, reason });
  });
});
