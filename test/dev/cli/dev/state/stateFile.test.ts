import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readStateFile, writeStateFile } from "#src/dev/cli/dev/state/stateFile.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "state-file-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("platform dev state files", () => {
  it("writes pretty JSON readable by this user only, and reads it back", () => {
    const file = path.join(dir, "x.json");
    writeStateFile(file, { pid: 1 });
    expect(readFileSync(file, "utf8")).toBe('{\n  "pid": 1\n}\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readStateFile(file)).toEqual({ pid: 1 });
  });

  it.each([
    ["missing", null],
    ["half-written by a crash", '{"pid": '],
  ])("reads a %s file as null", (_case, content) => {
    const file = path.join(dir, "x.json");
    if (content !== null) writeFileSync(file, content);
    expect(readStateFile(file)).toBeNull();
  });

  it("an exclusive write fails when the file is there, and leaves it", () => {
    const file = path.join(dir, "x.json");
    writeStateFile(file, { pid: 1 });
    expect(() => writeStateFile(file, { pid: 2 }, { exclusive: true })).toThrow(
      expect.objectContaining({ code: "EEXIST" }),
    );
    expect(readStateFile(file)).toEqual({ pid: 1 });
  });
});
