import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// Every actor class the API worker's wrangler.toml names must be exported by both of its entries: the
// deployed one and platform dev's. When they kept two lists, platform dev's missed LiveRunBudget and
// every workflow.start under platform dev answered 500 (workerd: "no such Durable Object class is
// exported from the worker").
const repo = path.resolve(import.meta.dirname, "../..");
const read = (file: string) => readFileSync(path.join(repo, file), "utf8");

const configured = [...read("wrangler.toml").matchAll(/^class_name = "(\w+)"/gm)].map((m) => m[1]);
const exported = [...read("src/workers/api/apiActorClasses.ts").matchAll(/^export \{ (\w+) \} from/gm)].map(
  (m) => m[1],
);

describe("the API worker's actor classes", () => {
  it("are exported from the one list, each class wrangler.toml names", () => {
    expect(configured.length).toBeGreaterThan(0);
    expect([...exported].sort()).toEqual([...configured].sort());
  });

  it.each([
    ["the deployed API worker", "src/workers/api/index.ts", "./apiActorClasses.ts"],
    ["platform dev's API worker", "src/dev/routes/devApiWorker.ts", "../../workers/api/apiActorClasses.ts"],
  ])("%s re-exports that list", (_, entry, list) => {
    expect(read(entry)).toContain(`export * from "${list}";`);
  });
});
