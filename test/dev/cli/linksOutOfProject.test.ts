import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { initCommand } from "#src/dev/cli/commands/init.ts";
import { refuseLinksOutOfProject } from "#src/dev/cli/linksOutOfProject.ts";

/** A project folder and a folder outside it holding `victim.txt`, the file a hostile link points at. */
function projectBesideVictim() {
  const base = mkdtempSync(path.join(tmpdir(), "links-"));
  const project = path.join(base, "app");
  const outside = path.join(base, "elsewhere");
  mkdirSync(project);
  mkdirSync(outside);
  // JSON, so a linked package.json reads as one (as the attack's did) and the refusal is the link's.
  writeFileSync(path.join(outside, "victim.txt"), '{ "name": "victim" }\n');
  return { project, outside, victim: path.join(outside, "victim.txt") };
}

describe("refuseLinksOutOfProject: the platform writes only inside the project folder", () => {
  it.each([
    [
      "a file linked out",
      (p: string, o: string) => symlinkSync(path.join(o, "victim.txt"), path.join(p, "package.json")),
      "package.json",
    ],
    [
      "a folder linked out",
      (p: string, o: string) => symlinkSync(o, path.join(p, ".platform")),
      ".platform/build/worker.js",
    ],
  ])("refuses %s, naming the link", (_, link, target) => {
    const { project, outside } = projectBesideVictim();
    link(project, outside);
    expect(() => refuseLinksOutOfProject(project, path.join(project, target))).toThrow(
      new RegExp(
        `^${target.split("/")[0]!.replace(".", "\\.")} is a symbolic link to .*elsewhere.*, outside the project folder`,
      ),
    );
  });

  it("follows a link that stays inside, and a path not there yet", () => {
    const { project } = projectBesideVictim();
    mkdirSync(path.join(project, "real"));
    symlinkSync(path.join(project, "real"), path.join(project, ".platform"));
    expect(() => refuseLinksOutOfProject(project, path.join(project, ".platform", "build", "x.js"))).not.toThrow();
    expect(() => refuseLinksOutOfProject(project, path.join(project, "src", "index.ts"))).not.toThrow();
  });
});

describe("platform init does not write through a link out of the folder", () => {
  it.each(["package.json", ".gitignore"])(
    "a %s linked to a file outside: refused, the target unchanged",
    async (name) => {
      const { project, victim } = projectBesideVictim();
      symlinkSync(victim, path.join(project, name));
      await expect(initCommand.run({ positionals: [project], values: {} } as never)).rejects.toThrow(
        new RegExp(`${name.replace(".", "\\.")} is a symbolic link to .*victim\\.txt, outside the project folder`),
      );
      expect(readFileSync(victim, "utf8")).toBe('{ "name": "victim" }\n');
    },
  );
});
