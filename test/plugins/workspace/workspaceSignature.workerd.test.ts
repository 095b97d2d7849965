import { describe, expect, it } from "vitest";
import {
  hmacSha256Hex,
  REPLAY_WINDOW_SECONDS,
  signWorkspaceRequest,
  verifyWorkspaceSignature,
} from "#src/plugins/workspace/workspaceSignature.ts";

// Slack's documented example (api.slack.com/authentication/verifying-requests-from-slack),
// copied verbatim from the anchors file, section 3.3.
const SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const SLACK_TS = "1531420618";
const SLACK_BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const SLACK_SIG = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
const NOW = Number(SLACK_TS);

// An independent HMAC implementation: Node's own (workerd's nodejs_compat), not WebCrypto.
// The worker tsconfig carries no Node types, hence the narrow hand-written shape.
interface NodeHmac {
  update(data: string | Uint8Array, encoding?: "utf8"): NodeHmac;
  digest(encoding: "hex"): string;
}
const nodeCrypto = "node:crypto";
const { createHmac } = (await import(/* @vite-ignore */ nodeCrypto)) as {
  createHmac(alg: "sha256", key: string | Uint8Array): NodeHmac;
};
const utf8 = (text: string) => new TextEncoder().encode(text);
const fromHex = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (h) => parseInt(h, 16));

describe("HMAC-SHA256 primitive: RFC 4231 known answers", () => {
  it("test case 1: key = 20 bytes of 0x0b, data = 'Hi There'", async () => {
    expect(await hmacSha256Hex("\x0b".repeat(20), "Hi There")).toBe(
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
    );
  });
  it("test case 2: key = 'Jefe', data = 'what do ya want for nothing?'", async () => {
    expect(await hmacSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });
});

describe("verifyWorkspaceSignature", () => {
  it("the documented example: body is 362 bytes and the signature is accepted", async () => {
    expect(new TextEncoder().encode(SLACK_BODY).byteLength).toBe(362);
    expect(
      await verifyWorkspaceSignature(
        SLACK_SECRET,
        { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
        NOW,
      ),
    ).toEqual({ ok: true });
    // Same bytes as an ArrayBuffer / Uint8Array.
    const bytes = new TextEncoder().encode(SLACK_BODY);
    expect(
      (
        await verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: bytes },
          NOW,
        )
      ).ok,
    ).toBe(true);
    expect(
      (
        await verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: bytes.buffer as ArrayBuffer },
          NOW,
        )
      ).ok,
    ).toBe(true);
  });

  it("our signer reproduces the documented signature", async () => {
    expect(await signWorkspaceRequest(SLACK_SECRET, SLACK_TS, SLACK_BODY)).toBe(SLACK_SIG);
  });

  it("accepts a signature made by an independent implementation (node:crypto createHmac)", async () => {
    const body = JSON.stringify({
      type: "event_callback",
      team_id: "T0TEST",
      event: { type: "message", text: "héllo ✓" },
    });
    const ts = "1800000000";
    const sig = "v0=" + createHmac("sha256", "another-secret").update(`v0:${ts}:${body}`, "utf8").digest("hex");
    expect(
      await verifyWorkspaceSignature(
        "another-secret",
        { timestampHeader: ts, signatureHeader: sig, rawBody: body },
        1_800_000_000,
      ),
    ).toEqual({ ok: true });
    expect(await signWorkspaceRequest("another-secret", ts, body)).toBe(sig);
  });

  it("uses the secret as UTF-8 text, not hex-decoded", async () => {
    const hexLike = "00".repeat(16);
    const ts = "1800000000";
    const asText = "v0=" + createHmac("sha256", utf8(hexLike)).update(`v0:${ts}:x`).digest("hex");
    const asHex = "v0=" + createHmac("sha256", fromHex(hexLike)).update(`v0:${ts}:x`).digest("hex");
    expect(
      (
        await verifyWorkspaceSignature(
          hexLike,
          { timestampHeader: ts, signatureHeader: asText, rawBody: "x" },
          1_800_000_000,
        )
      ).ok,
    ).toBe(true);
    expect(
      (
        await verifyWorkspaceSignature(
          hexLike,
          { timestampHeader: ts, signatureHeader: asHex, rawBody: "x" },
          1_800_000_000,
        )
      ).ok,
    ).toBe(false);
  });

  const table: [string, () => Promise<unknown>, string][] = [
    [
      "a 1-byte body change",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY.replace("foobar", "foobaz") },
          NOW,
        ),
      "bad_signature",
    ],
    [
      "a trailing newline",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY + "\n" },
          NOW,
        ),
      "bad_signature",
    ],
    [
      "a flipped signature digit",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG.slice(0, -1) + "2", rawBody: SLACK_BODY },
          NOW,
        ),
      "bad_signature",
    ],
    [
      "the wrong secret",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET + "x",
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW,
        ),
      "bad_signature",
    ],
    [
      "a different timestamp header (signature bound to it)",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: String(NOW + 1), signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW,
        ),
      "bad_signature",
    ],
    [
      "stale: now = ts + 301",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW + REPLAY_WINDOW_SECONDS + 1,
        ),
      "stale",
    ],
    [
      "from the future: now = ts - 301",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW - 301,
        ),
      "stale",
    ],
    [
      "replayed an hour later",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW + 3600,
        ),
      "stale",
    ],
    [
      "no signature header",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: null, rawBody: SLACK_BODY },
          NOW,
        ),
      "missing",
    ],
    [
      "no timestamp header",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: null, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW,
        ),
      "missing",
    ],
    [
      "empty signature header",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: "", rawBody: SLACK_BODY },
          NOW,
        ),
      "missing",
    ],
    [
      "unknown version prefix v1=",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG.replace("v0=", "v1="), rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "bare hex without v0=",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG.slice(3), rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "truncated digest",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG.slice(0, -2), rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "non-hex digest",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG.slice(0, -1) + "g", rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "two signatures joined",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: `${SLACK_SIG},${SLACK_SIG}`, rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "timestamp in milliseconds form with a dot",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: "1531420618.0", signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
    [
      "negative timestamp",
      () =>
        verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: "-1531420618", signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW,
        ),
      "malformed",
    ],
  ];
  it.each(table)("refuses %s", async (_name, run, reason) => {
    const result = (await run()) as { ok: boolean; reason?: string; message?: string };
    expect(result.ok).toBe(false);
    expect(result.reason).toBe(reason);
    expect(result.message?.length).toBeGreaterThan(0);
  });

  it("accepts at exactly the edge of the window, on both sides", async () => {
    expect(
      (
        await verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW + 300,
        )
      ).ok,
    ).toBe(true);
    expect(
      (
        await verifyWorkspaceSignature(
          SLACK_SECRET,
          { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY },
          NOW - 300,
        )
      ).ok,
    ).toBe(true);
  });

  it("refuses to run without a configured secret", async () => {
    await expect(
      verifyWorkspaceSignature("", { timestampHeader: SLACK_TS, signatureHeader: SLACK_SIG, rawBody: SLACK_BODY }, NOW),
    ).rejects.toThrow(/signing secret/);
  });
});
