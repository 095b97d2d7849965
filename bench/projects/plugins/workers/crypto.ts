// Bench worker: webhook signature checks inside workerd, in a bounded batch.
// workerd's Date.now() does not advance while the batch runs (no I/O), so the
// bench times the whole request from Node and reads workerd's CPU from /proc.
import { verifyEd25519Webhook, type Ed25519Implementation } from "../../../../src/core/crypto/ed25519.ts";
import { verifyWorkspaceSignature } from "../../../../src/plugins/workspace/workspaceSignature.ts";

interface Env {
  /** JSON: the signed request every check verifies (same bytes as the Node figures). */
  VERIFY_INPUT: string;
}

interface VerifyInput {
  body: string;
  timestamp: string;
  ed25519: { publicKeyHex: string; signatureHex: string };
  slack: { signingSecret: string; signature: string };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const kind = url.searchParams.get("kind") as Ed25519Implementation | "slack";
    if (kind !== "webcrypto" && kind !== "noble" && kind !== "slack")
      return Response.json({ error: `unknown kind ${kind}` }, { status: 400 });
    const n = Math.max(0, Math.min(200_000, Math.floor(Number(url.searchParams.get("n") ?? "0"))));
    const input = JSON.parse(env.VERIFY_INPUT) as VerifyInput;
    let ok = 0;
    for (let i = 0; i < n; i++) {
      const check =
        kind === "slack"
          ? await verifyWorkspaceSignature(input.slack.signingSecret, {
              timestampHeader: input.timestamp,
              signatureHeader: input.slack.signature,
              rawBody: input.body,
            })
          : await verifyEd25519Webhook(
              input.ed25519.publicKeyHex,
              { signatureHex: input.ed25519.signatureHex, timestamp: input.timestamp, rawBody: input.body },
              { implementation: kind },
            );
      if (check.ok) ok++;
    }
    return Response.json({ n, ok });
  },
};
