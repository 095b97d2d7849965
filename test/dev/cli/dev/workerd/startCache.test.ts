import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bundleWorker } from "#src/dev/cli/dev/workerd/buildPlatformWorkers.ts";
import { readDeployedWorkers } from "#src/dev/cli/dev/workerd/deployedWorkers.ts";
import { cacheKey, type StartCache, startCache } from "#src/dev/cli/dev/workerd/startCache.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "platform-start-cache-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A cache in `dir/cache` that counts what was found and what was stored. */
function countingCache() {
  const inner = startCache(path.join(dir, "cache"));
  const counts = { hits: 0, misses: 0, writes: 0 };
  const cache: StartCache = {
    read(key) {
      const text = inner.read(key);
      if (text === null) counts.misses++;
      else counts.hits++;
      return text;
    },
    write(key, text) {
      counts.writes++;
      inner.write(key, text);
    },
  };
  return { cache, counts };
}

describe("startCache", () => {
  it("reads back what was written, and null for a key never written", () => {
    const cache = startCache(path.join(dir, "cache"));
    expect(cache.read("k")).toBeNull();
    cache.write("k", "text é");
    expect(cache.read("k")).toBe("text é");
  });

  it("passes by a folder it cannot write: a start never fails on the cache", () => {
    const blocker = path.join(dir, "a-file");
    writeFileSync(blocker, "");
    const cache = startCache(path.join(blocker, "cache"));
    expect(() => cache.write("k", "text")).not.toThrow();
    expect(cache.read("k")).toBeNull();
  });

  it("keys by every part and where each part ends", () => {
    expect(cacheKey("x", ["ab", "c"])).not.toBe(cacheKey("x", ["a", "bc"]));
    expect(cacheKey("x", ["a"])).not.toBe(cacheKey("y", ["a"]));
    expect(cacheKey("x", ["a", Buffer.from("b")])).toBe(cacheKey("x", ["a", "b"]));
  });
});

describe("bundleWorker's cache", () => {
  it("serves the bundle while its files are unchanged, and bundles again when one changes", async () => {
    const entry = path.join(dir, "entry.ts");
    const dependency = path.join(dir, "answer.ts");
    writeFileSync(
      entry,
      `import { answer } from "./answer.ts";\nexport default { fetch: () => new Response(answer) };\n`,
    );
    writeFileSync(dependency, `export const answer = "first";\n`);
    const { cache, counts } = countingCache();
    const outfile = path.join(dir, "out", "worker.js");

    await bundleWorker(entry, ["default"], outfile, cache);
    expect(readFileSync(outfile, "utf8")).toContain('"first"');
    expect(counts).toEqual({ hits: 0, misses: 1, writes: 1 });

    rmSync(outfile);
    await bundleWorker(entry, ["default"], outfile, cache);
    expect(readFileSync(outfile, "utf8")).toContain('"first"');
    expect(counts).toEqual({ hits: 1, misses: 1, writes: 1 });

    // A file imported by the entry (not the entry itself) changes: the cached bundle is not served.
    writeFileSync(dependency, `export const answer = "second";\n`);
    await bundleWorker(entry, ["default"], outfile, cache);
    expect(readFileSync(outfile, "utf8")).toContain('"second"');
    expect(readFileSync(outfile, "utf8")).not.toContain('"first"');
    expect(counts).toEqual({ hits: 2, misses: 1, writes: 2 });
  });

  it("keys by the exports asked for", async () => {
    const entry = path.join(dir, "entry.ts");
    writeFileSync(entry, `export default {};\nexport class Actor {}\n`);
    const { cache, counts } = countingCache();
    await bundleWorker(entry, ["default"], path.join(dir, "a.js"), cache);
    await bundleWorker(entry, ["default", "Actor"], path.join(dir, "b.js"), cache);
    expect(counts.writes).toBe(2);
    expect(readFileSync(path.join(dir, "b.js"), "utf8")).toContain("Actor");
    expect(readFileSync(path.join(dir, "a.js"), "utf8")).not.toContain("Actor");
  });
});

describe("readDeployedWorkers' cache", () => {
  /** A repository with one worker config at its root, as the platform's API worker's. */
  function repoWithConfig(vars: string): string {
    const repo = path.join(dir, "repo");
    mkdirSync(path.join(repo, "src/plugins"), { recursive: true });
    mkdirSync(path.join(repo, "src/workers"), { recursive: true });
    writeFileSync(path.join(repo, "src/index.ts"), "export default {};\n");
    writeFileSync(
      path.join(repo, "wrangler.toml"),
      `name = "platform-api"\nmain = "src/index.ts"\ncompatibility_date = "2026-10-01"\n\n[vars]\n${vars}\n`,
    );
    return repo;
  }

  it("answers from the cache while the configs are unchanged, and reads them with wrangler again when one changes", async () => {
    const repo = repoWithConfig(`GREETING = "hello"`);
    const { cache, counts } = countingCache();
    const first = await readDeployedWorkers(repo, cache);
    expect(first.map((w) => [w.name, w.options.bindings])).toEqual([["platform-api", { GREETING: "hello" }]]);
    expect(counts).toEqual({ hits: 0, misses: 1, writes: 1 });

    expect(await readDeployedWorkers(repo, cache)).toEqual(JSON.parse(JSON.stringify(first)));
    expect(counts).toEqual({ hits: 1, misses: 1, writes: 1 });

    repoWithConfig(`GREETING = "changed"`);
    const changed = await readDeployedWorkers(repo, cache);
    expect(changed[0]!.options.bindings).toEqual({ GREETING: "changed" });
    expect(counts).toEqual({ hits: 1, misses: 2, writes: 2 });
  }, 60_000); // importing wrangler takes seconds under load

  it("reads the configs with wrangler again when the cached answer does not parse", async () => {
    const repo = repoWithConfig(`GREETING = "hello"`);
    const { cache, counts } = countingCache();
    await readDeployedWorkers(repo, cache);
    const [entry] = readdirSync(path.join(dir, "cache"));
    writeFileSync(path.join(dir, "cache", entry!), "{ truncated");
    const again = await readDeployedWorkers(repo, cache);
    expect(again[0]!.options.bindings).toEqual({ GREETING: "hello" });
    expect(counts).toEqual({ hits: 1, misses: 1, writes: 2 });
  }, 60_000);
});
