import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AcceptedScript, createScriptUploadStandIn } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";
import { replaySavedScripts, saveAcceptedScript, scriptsDir } from "#src/dev/cli/up/savedScripts.ts";
import { acceptedScript } from "#test/support/cloudflare/acceptedScript.ts";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";

const TARGET = { apiBase: "http://cloudflare.local/client/v4", accountId: "acc", namespace: "ns", apiToken: "t" };
const GOOD = "export default { fetch() { return new Response('hi') } }; export class WorkflowRun {}";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) removeWorkDir(dir);
});

function standIn() {
  const accepted: AcceptedScript[] = [];
  const cloudflare = createScriptUploadStandIn({
    apiToken: TARGET.apiToken,
    startScript: startInWorkerd,
    onAccepted: (script) => {
      accepted.push(script);
    },
  });
  return { cloudflare, accepted };
}

function kept(name: string, module: string, migrationTag: string | null = "v7"): AcceptedScript {
  return acceptedScript(
    name,
    module,
    { binding: "WORKFLOW_RUNS", className: "WorkflowRun" },
    {
      migrationTag,
      metadata: { migrations: { old_tag: "v6", new_tag: "v7", new_sqlite_classes: [] } },
    },
  );
}

describe("replaySavedScripts: what `platform up` kept, uploaded again at start", () => {
  it("takes every kept script back at its migration tag, skipping (and naming) the ones that cannot start or be read", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "saved-scripts-"));
    dirs.push(stateDir);
    saveAcceptedScript(stateDir, kept("proj-good", GOOD));
    // Kept by a platform that accepted anything: the upload that took `platform up` down at every start.
    saveAcceptedScript(stateDir, kept("proj-broken", "this is not javascript("));
    saveAcceptedScript(stateDir, kept("proj-torn", GOOD));
    writeFileSync(path.join(scriptsDir(stateDir), "proj-torn", "upload", "upload.json"), "{ half a file");

    const { cloudflare, accepted } = standIn();
    const skipped = await replaySavedScripts(stateDir, cloudflare, TARGET);

    expect(accepted.map((s) => s.name)).toEqual(["proj-good"]);
    expect(accepted[0]).toMatchObject({ migrationTag: "v7", durableObjectClasses: ["WorkflowRun"] });
    expect(skipped).toEqual([
      {
        name: "proj-broken",
        reason: expect.stringMatching(
          /^Cloudflare's checks refuse it now: Uncaught SyntaxError: Unexpected identifier 'is'\n\s+at worker\.js:1:5 \[code: 10021\]$/,
        ),
      },
      {
        name: "proj-torn",
        reason: expect.stringMatching(/^its saved upload in .*proj-torn\/upload cannot be read \(.*JSON.*\)$/),
      },
    ]);
    // Nothing kept is thrown away: the next push replaces it.
    expect(readdirSync(scriptsDir(stateDir)).sort()).toEqual(["proj-broken", "proj-good", "proj-torn"]);
  });
});
