import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type AcceptedScript, createScriptUploadStandIn } from "#src/dev/cloudflare/scriptUploadStandIn.ts";
import { startInWorkerd } from "#src/dev/cloudflare/workerdScriptStarter.ts";
import { replaySavedScripts, saveAcceptedScript, scriptsDir } from "#src/dev/cli/up/savedScripts.ts";
import { acceptedScript } from "#test/support/cloudflare/acceptedScript.ts";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";

const TARGET = { apiBase: "http://cloudflare.local/client/v4", accountId: "acc", namespace: "ns", apiToken: "t" };
const MACHINE_KEY = Buffer.alloc(32, 7);
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
    saveAcceptedScript(stateDir, kept("proj-good", GOOD), MACHINE_KEY);
    // Kept by a platform that accepted anything: the upload that took `platform up` down at every start.
    saveAcceptedScript(stateDir, kept("proj-broken", "this is not javascript("), MACHINE_KEY);
    saveAcceptedScript(stateDir, kept("proj-torn", GOOD), MACHINE_KEY);
    writeFileSync(path.join(scriptsDir(stateDir), "proj-torn", "upload", "upload.json"), "{ half a file");

    const { cloudflare, accepted } = standIn();
    const skipped = await replaySavedScripts(stateDir, cloudflare, TARGET, MACHINE_KEY);

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

describe("saveAcceptedScript: secrets sealed at rest", () => {
  const SECRET = "sk_live_4f9a1c2e7b"; // a value no other file holds
  const withSecret = (): AcceptedScript => {
    const script = kept("proj-secret", GOOD);
    return {
      ...script,
      metadata: {
        ...script.metadata,
        bindings: [
          ...script.metadata.bindings!,
          { type: "secret_text", name: "STRIPE_KEY", text: SECRET },
          { type: "plain_text", name: "MODE", text: "live" },
        ],
      },
    };
  };
  const filesUnder = (dir: string): string[] =>
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => path.join(entry.parentPath, entry.name));

  it("writes no secret value in plain text, and replays it as the value pushed", async () => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "saved-secrets-"));
    dirs.push(stateDir);
    saveAcceptedScript(stateDir, withSecret(), MACHINE_KEY);
    const files = filesUnder(stateDir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect(readFileSync(file, "utf8"), file).not.toContain(SECRET);

    const { cloudflare, accepted } = standIn();
    expect(await replaySavedScripts(stateDir, cloudflare, TARGET, MACHINE_KEY)).toEqual([]);
    expect(accepted[0]!.metadata.bindings).toEqual(
      expect.arrayContaining([
        { type: "secret_text", name: "STRIPE_KEY", text: SECRET },
        { type: "plain_text", name: "MODE", text: "live" },
      ]),
    );
  });

  it.each([
    ["another machine's key", (_dir: string) => Buffer.alloc(32, 8)],
    [
      "an altered sealed value",
      (dir: string) => {
        const file = path.join(scriptsDir(dir), "proj-secret", "upload", "upload.json");
        writeFileSync(
          file,
          readFileSync(file, "utf8").replace(/sealed:v1:(.)/, (_, c) => `sealed:v1:${c === "A" ? "B" : "A"}`),
        );
        return MACHINE_KEY;
      },
    ],
    [
      "a value in plain text (written by hand)",
      (dir: string) => {
        const file = path.join(scriptsDir(dir), "proj-secret", "upload", "upload.json");
        writeFileSync(file, readFileSync(file, "utf8").replace(/"sealed:v1:[^"]*"/, JSON.stringify(SECRET)));
        return MACHINE_KEY;
      },
    ],
  ])("skips the script, saying why, when it finds %s", async (_, change) => {
    const stateDir = mkdtempSync(path.join(tmpdir(), "saved-secrets-"));
    dirs.push(stateDir);
    saveAcceptedScript(stateDir, withSecret(), MACHINE_KEY);
    const key = change(stateDir);
    const { cloudflare, accepted } = standIn();
    const skipped = await replaySavedScripts(stateDir, cloudflare, TARGET, key);
    expect(accepted).toEqual([]);
    expect(skipped).toEqual([
      {
        name: "proj-secret",
        reason: expect.stringMatching(/cannot be read \(a secret binding (is not sealed|was sealed)/),
      },
    ]);
  });
});
