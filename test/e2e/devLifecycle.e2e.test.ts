import { spawn } from "node:child_process";
import { readFileSync, mkdtempSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  describeProcess,
  descendantsOf,
  devSession,
  initProject,
  isAlive,
  RUN_ROUTES,
  runCli,
  startDev,
  startRuns,
  type DevProcess,
  removeWorkDir,
} from "../support/e2e/index.ts";

// Ports of this file: 8950-8955. The scaffold's own `npm run dev`, with the package installed: package.long.e2e.test.ts.
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-lifecycle-"));
const running: DevProcess[] = [];
afterAll(async () => {
  for (const dev of running) await dev.stop("SIGTERM");
  removeWorkDir(work);
});

const lockOf = (dir: string) =>
  JSON.parse(readFileSync(path.join(dir, ".platform/dev.lock"), "utf8")) as { pid: number; url: string };

/** Polls until `check` holds or `timeoutMS` passes; resolves with the last answer. */
async function eventually<T>(check: () => T, done: (value: T) => boolean, timeoutMS: number): Promise<T> {
  const deadline = Date.now() + timeoutMS;
  let value = check();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    value = check();
  }
  return value;
}

const GREET_PROJECT = `import { Router } from "itty-router";
import { workflow } from "platform";

workflow("greet", {
  start: async () => ({ step: "wave" }),
  wave: async () => ({ done: true, result: "waved" }),
});
${RUN_ROUTES}`;

describe("the process tree of platform dev", () => {
  it("dies with the node process when it is SIGKILLed, and the same port is ready again at once", async () => {
    const dir = path.join(work, "killed");
    expect((await runCli(["init", dir])).code).toBe(0);
    const dev = await startDev([dir, "--port", "8950"]);
    const { pid } = lockOf(dir);
    // The watchdog has recorded workerd once it is up.
    const recorded = await eventually(
      () => readFileSync(path.join(dir, ".platform/dev.processes.json"), "utf8"),
      (text) => text.includes("workerd"),
      5_000,
    );
    expect(recorded).toContain("workerd");
    const tree = descendantsOf(pid);
    expect(tree.map(describeProcess).join("\n")).toMatch(/workerd/);

    process.kill(pid, "SIGKILL");
    const alive = await eventually(
      () => [pid, ...tree].filter(isAlive),
      (pids) => pids.length === 0,
      5_000,
    );
    expect(alive.map(describeProcess)).toEqual([]);
    await dev.stop();

    const again = await startDev([dir, "--port", "8950"]);
    running.push(again);
    expect(again.output()).not.toMatch(/already in use|already running/);
    expect((await fetch(again.url + "/")).status).toBe(200);
    await again.stop("SIGTERM");
  });

  it("stops, at the next start, what a platform dev killed together with its watchdog left running", async () => {
    const dir = path.join(work, "crashed");
    expect((await runCli(["init", dir])).code).toBe(0);
    const dev = await startDev([dir, "--port", "8951"]);
    const { pid } = lockOf(dir);
    await eventually(
      () => readFileSync(path.join(dir, ".platform/dev.processes.json"), "utf8"),
      (text) => text.includes("workerd"),
      5_000,
    );
    const watchdog = descendantsOf(pid).find((p) => describeProcess(p).includes("watchdogProcess.ts"));
    expect(watchdog).toBeDefined();
    const workerd = descendantsOf(pid).filter((p) => describeProcess(p).includes("workerd"));
    process.kill(watchdog!, "SIGKILL");
    process.kill(pid, "SIGKILL");
    await dev.stop();
    expect(workerd.filter(isAlive)).toEqual(workerd);

    const again = await startDev([dir, "--port", "8951"]);
    running.push(again);
    expect(again.output()).toMatch(
      new RegExp(`Stopped pid ${workerd[0]} \\(.*workerd.*\\), left over from a platform dev that was killed`),
    );
    expect(workerd.filter(isAlive)).toEqual([]);
    // Stopped right at its Ready line: the signal is not lost, and the start-up sweep then in flight is no error.
    expect((await again.stop("SIGTERM")).code).toBe(0);
    expect(again.output()).toContain("SIGTERM: stopping…");
    expect(again.output()).not.toMatch(/recovery sweep failed/);
  });

  it("stops nothing that a dev.processes.json which came with the folder names, and says so", async () => {
    const dir = path.join(work, "cloned");
    expect((await runCli(["init", dir])).code).toBe(0);
    // A process of the user's, and a record of it planted in the folder (as a cloned repository could carry).
    const victim = spawn("sleep", ["300"], { stdio: "ignore" });
    try {
      await eventually(
        () => readFileSync(`/proc/${victim.pid}/cmdline`, "utf8"),
        (text) => text.startsWith("sleep"),
        2_000,
      );
      const stat = readFileSync(`/proc/${victim.pid}/stat`, "utf8");
      const startTime = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
      const identity = { pid: victim.pid!, startTime, command: "sleep 300" };
      mkdirSync(path.join(dir, ".platform"), { recursive: true });
      writeFileSync(
        path.join(dir, ".platform/dev.processes.json"),
        JSON.stringify({ parent: identity, processes: [identity] }),
      );

      const dev = await startDev([dir, "--port", "8955"]);
      running.push(dev);
      expect(dev.output()).toContain(
        `Ignored ${path.join(dir, ".platform", "dev.processes.json")}: this machine's platform dev did not write it for this folder (it may have come with the folder), so no process was stopped.`,
      );
      expect(isAlive(victim.pid!)).toBe(true);
      expect((await dev.stop("SIGTERM")).code).toBe(0);
      expect(dev.output()).toContain("SIGTERM: stopping…");
    } finally {
      victim.kill("SIGKILL");
    }
  });

  it("says who holds a busy port, and that it is not this folder's platform dev", async () => {
    const dir = path.join(work, "busy");
    expect((await runCli(["init", dir])).code).toBe(0);
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(8952, "127.0.0.1", resolve));
    try {
      const result = await runCli(["dev", dir, "--port", "8952"]);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^platform: Address already in use: port 8952 on 127\.0\.0\.1 is held by /);
      expect(result.stderr).toContain(`held by pid ${process.pid} (`);
      expect(result.stderr).toContain(
        `not this folder's platform dev; stop it with \`kill ${process.pid}\` or pass --port N.`,
      );
      expect(existsSync(path.join(dir, ".platform/dev.lock"))).toBe(false);
    } finally {
      server.close();
    }
  });
});

describe("one platform dev per folder, its logs and its console", () => {
  it("refuses a second platform dev on the folder; the first keeps working with the CLI and prints request and step lines", async () => {
    const dir = path.join(work, "shared");
    await initProject(dir, GREET_PROJECT);
    const dev = await startDev([dir, "--port", "8953"]);
    running.push(dev);
    expect(dev.output()).not.toMatch(/plt_/);
    const { pid } = lockOf(dir);

    const second = await runCli(["dev", dir, "--port", "8954"]);
    expect(second.code).toBe(1);
    expect(second.stderr.trim()).toBe(`platform dev is already running for ${dir} (pid ${pid}, http://127.0.0.1:8953)`);
    expect(devSession(dir).pid).toBe(pid);
    const list = await runCli(["workflow", "list", "--dir", dir]);
    expect(list.code, list.stderr).toBe(0);

    await fetch(dev.url + "/");
    await dev.waitFor(/GET \/ → 200 in \d+ ms/);
    const [runId] = await startRuns(dev.url, "greet", 1, { name: "Ada" });
    await dev.waitFor(new RegExp(`run ${runId!.slice(0, 8)}: start#1 completed in \\d+ ms → wave`), 15_000);
    await dev.waitFor(new RegExp(`run ${runId!.slice(0, 8)}: greet completed`), 15_000);

    const opened = await runCli(["console", "--dir", dir], { env: { BROWSER: "none" } });
    expect(opened.code).toBe(0);
    expect(opened.stdout).toContain(`Console: ${devSession(dir).apiUrl}/console/`);
    expect(opened.stdout).toContain("Not opened (BROWSER=none)");
    expect(opened.stdout).not.toContain("plt_");
    const printed = await runCli(["console", "--dir", dir, "--print-token"]);
    expect(printed.stdout.trim()).toBe(`${devSession(dir).apiUrl}/console/#token=${devSession(dir).cliToken}`);

    // The console keeps its address across restarts.
    const { apiUrl } = devSession(dir);
    expect((await dev.stop("SIGTERM")).code).toBe(0);
    const again = await startDev([dir, "--port", "8953", "--quiet"]);
    running.push(again);
    expect(devSession(dir).apiUrl).toBe(apiUrl);
    await fetch(again.url + "/");
    // Stopped, it has printed all it will print.
    await again.stop("SIGTERM");
    expect(again.output()).not.toMatch(/GET \/ →/);
  });
});
