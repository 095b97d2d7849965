import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

const repo = path.resolve(import.meta.dirname, "../..");
const THIS_FILE = "test/tooling/conceptNames.test.ts";

/**
 * Names a concept had before it got one (issue 33.1), and the name it has now. A retired name that
 * reappears in src/, docs/ or test/ makes a second name for the same thing again.
 */
const RETIRED_NAMES: readonly (readonly [retired: string, concept: string, now: string])[] = [
  // The stranded-runs check (a push whose code lacks a live run's step).
  ["checkPushStrandsNothing", "the stranded-runs check", "checkStrandedRuns"],
  ["parsePushCheckBody", "the stranded-runs check", "parseStrandedRunsBody"],
  ["strandedBy", "the stranded-runs check", "findStrandedRuns"],
  ["missingAt", "the stranded-runs check", "strandedRunLacks"],
  ["push check", "the stranded-runs check", "stranded-runs check"],
  // Delivery: a plugin worker hands an event to a project's /__plugin/<id>.
  ["dispatchToProject", "delivery", "deliverToProject"],
  ["deliverDispatch", "delivery", "deliverClaimedEvent"],
  ["PluginDispatch", "delivery", "PluginDelivery"],
  ["PluginDispatchKind", "delivery", "PluginDeliveryKind"],
  ["pluginDispatch", "delivery", "pluginDelivery"],
  ["dispatchAddress", "delivery", "deliveryAddress"],
  ["DispatchOutcome", "delivery", "DeliveryOutcome"],
  ["isDispatchedInteraction", "delivery", "isDeliveredInteraction"],
  ["ChatCommandDispatchEvent", "delivery", "ChatCommandDeliveryEvent"],
  ["ChatComponentDispatchEvent", "delivery", "ChatComponentDeliveryEvent"],
  ["ChatModalDispatchEvent", "delivery", "ChatModalDeliveryEvent"],
  ["ChatMessageDispatchEvent", "delivery", "ChatMessageDeliveryEvent"],
  ["ChatReactionDispatchEvent", "delivery", "ChatReactionDeliveryEvent"],
];

/** Names that were declared twice (client and server, layer and layer): now each is declared once in src/. */
const DECLARED_ONCE = [
  "deployProject",
  "putProjectDeployment",
  "redeemCallbackToken",
  "redeemCallbackTokenWithPlatform",
  "findStrandedRuns",
  "StrandedRuns",
  "StrandedRun",
  "deliverToProject",
  "PluginDelivery",
];

/** Where `name` is declared (an exported function, interface, type, class or const) in `files`. */
function declarations(files: Record<string, string>, name: string): string[] {
  const declared = new RegExp(`^export (?:async )?(?:function|interface|type|class|const) ${name}\\b`, "m");
  return Object.entries(files)
    .filter(([file, text]) => file.startsWith("src/") && declared.test(text))
    .map(([file]) => file);
}

/** Where each retired name occurs as a whole word in `files`: `file:line`. */
function occurrences(files: Record<string, string>, retired: string): string[] {
  const word = new RegExp(`(?<![\\w-])${retired.replace(/ /g, "\\s+")}(?![\\w-])`, "i");
  const found: string[] = [];
  for (const [file, text] of Object.entries(files))
    text.split("\n").forEach((line, index) => {
      if (word.test(line)) found.push(`${file}:${index + 1}`);
    });
  return found;
}

function trackedTexts(): Record<string, string> {
  const files = execFileSync("git", ["ls-files", "src", "docs", "test", "README.md"], { cwd: repo, encoding: "utf8" })
    .trim()
    .split("\n")
    .filter((file) => file !== THIS_FILE && /\.(ts|js|md|toml|json|html)$/.test(file));
  return Object.fromEntries(files.map((file) => [file, readFileSync(path.join(repo, file), "utf8")]));
}

describe("one name per concept across src/, docs/ and test/", () => {
  const texts = trackedTexts();

  it.each(RETIRED_NAMES)("%s (%s) is gone: the name is %s", (retired) => {
    expect(occurrences(texts, retired)).toEqual([]);
  });

  it.each(DECLARED_ONCE)("%s is declared once in src/", (name) => {
    expect(declarations(texts, name)).toHaveLength(1);
  });

  it.each([
    [{ "src/a.ts": "export async function deployProject() {}", "src/b.ts": "export function deployProject() {}" }, 2],
    [{ "src/a.ts": "export interface StrandedRuns {}", "test/b.ts": "export interface StrandedRuns {}" }, 1],
    [{ "src/a.ts": "export type StrandedRunsX = 1;" }, 0],
  ])("counts declarations: %j", (files, count) => {
    const name = Object.values(files)[0]?.includes("deployProject") ? "deployProject" : "StrandedRuns";
    expect(declarations(files, name)).toHaveLength(count);
  });

  // The search must see a retired name where it would be written, or the table above proves nothing.
  it.each([
    ["src/x.ts", "import { dispatchToProject } from './kit';", "dispatchToProject", ["src/x.ts:1"]],
    ["docs/x.md", "ok\nthe Push  check runs", "push check", ["docs/x.md:2"]],
    ["docs/x.md", "`PluginDispatch`", "PluginDispatch", ["docs/x.md:1"]],
    ["src/x.ts", "PluginDispatchKind", "PluginDispatch", []],
    ["src/x.ts", "src/contracts/pluginDispatch.ts", "pluginDispatch", ["src/x.ts:1"]],
    ["src/x.ts", "a missingAtAll b", "missingAt", []],
  ])("finds a retired name in %s: %j", (file, text, retired, found) => {
    expect(occurrences({ [file]: text }, retired)).toEqual(found);
  });
});
