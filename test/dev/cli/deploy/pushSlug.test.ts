import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { pushSlugFor } from "#src/dev/cli/deploy/pushSlug.ts";
import { projectSlugFor } from "#src/dev/cli/dev/project/projectSlugFor.ts";

const made: string[] = [];
function project(folder: string, name?: string): string {
  const root = mkdtempSync(path.join(os.tmpdir(), "slug-"));
  made.push(root);
  const dir = path.join(root, folder);
  mkdirSync(dir);
  if (name !== undefined) writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name }));
  return dir;
}
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("pushSlugFor", () => {
  it.each([
    ["--slug wins", "folder", "pkg-name", "chosen", "chosen"],
    ["package.json name next", "folder", "@scope/Shop Front", undefined, "shop-front"],
    ["the folder name last", "My_App", undefined, undefined, "my-app"],
    // Left as is so the platform refuses it with its own message (platform dev renames it app-api locally).
    ["a platform route name unchanged", "api", undefined, undefined, "api"],
    ["an RFC 2142 mailbox unchanged", "support", undefined, undefined, "support"],
  ])("%s", (_name, folder, pkg, flag, expected) => {
    expect(pushSlugFor(project(folder, pkg), flag)).toBe(expected);
  });
});

describe("projectSlugFor (platform dev): the local API takes no reserved slug either", () => {
  it.each([
    ["api", "app-api"],
    ["support", "app-support"],
    ["mailer-daemon", "app-mailer-daemon"],
    ["projects", "app-projects"],
    ["shop", "shop"],
  ])("runs a folder named %s as %s", (folder, expected) => {
    expect(projectSlugFor(project(folder))).toBe(expected);
  });
});
