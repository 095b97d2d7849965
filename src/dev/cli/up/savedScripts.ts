import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { AcceptedScript, ScriptUploadStandIn } from "../../cloudflare/scriptUploadStandIn.ts";
import { openSecretText, sealSecretText } from "./sealedSecretText.ts";

/**
 * What the stand-in accepted survives a `platform up` restart: each script's
 * last upload is kept under `<state>/scripts/<name>/upload/` (metadata,
 * modules, migration state) and replayed into the fresh stand-in at start, as
 * one upload whose migration brings its Durable Object classes straight to
 * the kept tag, so the next push's `old_tag` still matches. A kept script
 * that no longer starts is skipped at start, never fatal. A secret binding's
 * value is kept sealed with the machine key (sealedSecretText.ts), never in
 * plain text.
 */
interface SavedUpload {
  metadata: AcceptedScript["metadata"];
  modules: { name: string; contentType: string }[];
  migrationTag: string | null;
  durableObjectClasses: string[];
}

export function scriptsDir(stateDir: string): string {
  return path.join(stateDir, "scripts");
}

type Bindings = NonNullable<AcceptedScript["metadata"]["bindings"]>;

/** Each `secret_text` binding's `text` passed through `convert` (sealing on save, opening on replay). */
function withSecretTexts(bindings: Bindings | undefined, convert: (text: string) => string): Bindings | undefined {
  return bindings?.map((binding) =>
    binding.type === "secret_text" ? { ...binding, text: convert((binding as { text: string }).text) } : binding,
  ) as Bindings | undefined;
}

export function saveAcceptedScript(stateDir: string, script: AcceptedScript, machineKey: Buffer): void {
  const dir = path.join(scriptsDir(stateDir), script.name, "upload");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const modules = [...script.modules].map(([name, module], i) => {
    writeFileSync(path.join(dir, `module-${i}`), module.content);
    return { name, contentType: module.contentType };
  });
  const saved: SavedUpload = {
    metadata: {
      ...script.metadata,
      bindings: withSecretTexts(script.metadata.bindings, (text) => sealSecretText(machineKey, text)),
    },
    modules,
    migrationTag: script.migrationTag,
    durableObjectClasses: script.durableObjectClasses,
  };
  // Sealed or not, the upload is this user's only.
  writeFileSync(path.join(dir, "upload.json"), JSON.stringify(saved, null, 2) + "\n", { mode: 0o600 });
}

/** A kept script that is not served this run, and why (in Cloudflare's words when the stand-in refused it). */
export interface SkippedScript {
  name: string;
  reason: string;
}

/**
 * Uploads every kept script into `standIn` again, which starts each one as
 * for a push: a script that cannot be read back, or that the stand-in
 * refuses now, is skipped (and named in the answer) while the others go on.
 */
export async function replaySavedScripts(
  stateDir: string,
  standIn: ScriptUploadStandIn,
  target: { apiBase: string; accountId: string; namespace: string; apiToken: string },
  machineKey: Buffer,
): Promise<SkippedScript[]> {
  const root = scriptsDir(stateDir);
  if (!existsSync(root)) return [];
  const skipped: SkippedScript[] = [];
  for (const name of readdirSync(root).sort()) {
    const dir = path.join(root, name, "upload");
    if (!existsSync(path.join(dir, "upload.json"))) continue;
    let form: FormData;
    try {
      form = savedUploadForm(dir, machineKey);
    } catch (error) {
      skipped.push({ name, reason: `its saved upload in ${dir} cannot be read (${(error as Error).message})` });
      continue;
    }
    const url = `${target.apiBase}/accounts/${target.accountId}/workers/dispatch/namespaces/${target.namespace}/scripts/${encodeURIComponent(name)}`;
    const response = await standIn.fetch(
      new Request(url, { method: "PUT", headers: { authorization: `Bearer ${target.apiToken}` }, body: form }),
    );
    if (response.ok) continue;
    const body = (await response.json().catch(() => null)) as { errors?: { code: number; message: string }[] } | null;
    const errors = body?.errors?.map((e) => `${e.message} [code: ${e.code}]`).join("; ") || `status ${response.status}`;
    skipped.push({ name, reason: `Cloudflare's checks refuse it now: ${errors}` });
  }
  return skipped;
}

/** The kept upload as one upload whose migration brings the script's classes straight to the kept tag. */
function savedUploadForm(dir: string, machineKey: Buffer): FormData {
  const saved = JSON.parse(readFileSync(path.join(dir, "upload.json"), "utf8")) as SavedUpload;
  const { migrations: _previousStep, ...kept } = saved.metadata;
  const metadata = {
    ...kept,
    bindings: withSecretTexts(kept.bindings, (sealed) => openSecretText(machineKey, sealed)),
  };
  const form = new FormData();
  const replayed = saved.migrationTag
    ? { ...metadata, migrations: { new_tag: saved.migrationTag, new_sqlite_classes: saved.durableObjectClasses } }
    : metadata;
  form.append("metadata", new Blob([JSON.stringify(replayed)], { type: "application/json" }));
  saved.modules.forEach((module, i) => {
    form.append(
      module.name,
      new Blob([readFileSync(path.join(dir, `module-${i}`))], { type: module.contentType }),
      module.name,
    );
  });
  return form;
}
