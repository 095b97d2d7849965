import { writeFileSync } from "node:fs";
import path from "node:path";
import { runCli } from "#test/support/e2e/cliProcess.ts";
import { loginToUp, spawnCli, startPlatformUp, type StreamingCli } from "#test/support/e2e/platformUp.ts";
import { removeWorkDir } from "#test/support/e2e/workDir.ts";
import { initProject, killTree } from "#test/support/e2e/workflowProjects.ts";
import type { ChaosPlatform } from "./chaosPlatform.ts";
import { chaosProjectSource } from "./chaosProjectSource.ts";
import { loopbackFetch } from "./loopbackFetch.ts";

/** A push that got no answer (the platform restarting, a 5xx) is tried again this many times. */
const PUSH_TRIES = 3;
/** A restart that lost one of its internal ports to another process is tried again this many times. */
const RESTART_TRIES = 3;

/**
 * The chaos project pushed to `platform up`: build 0 first, later builds by the nemesis. `platform up` keeps its
 * state (D1, Durable Objects, the pushed scripts) in its state folder across restarts, so the nemesis kills and
 * restarts it as it does `platform dev`. The ledger's address is written into the source (no .dev.vars here), and
 * `platform up` is told to let projects fetch it (`--allow-outbound`).
 */
export async function startUpPlatform(options: {
  dir: string;
  port: number;
  ledgerUrl: string;
  log: (line: string) => void;
}): Promise<ChaosPlatform> {
  const { dir, port, ledgerUrl, log } = options;
  const api = `http://127.0.0.1:${port}`;
  // The ledger listens on this machine, which platform up refuses a project's fetch of, but for what it allows.
  const allowLedger = ["--allow-outbound", new URL(ledgerUrl).host];
  const platform = await startPlatformUp(port, "platform-chaos-up-", allowLedger);
  let up: StreamingCli = platform.up;
  const stateArgs = ["up", "--port", String(port), "--state", path.join(platform.tmp, "state"), ...allowLedger];
  const stop = async () => {
    await platform.browser.close().catch(() => {});
    const stopped = up.child.exitCode === null ? await Promise.race([up.stop("SIGTERM"), timeout(15_000)]) : null;
    if (up.child.exitCode === null && up.child.signalCode === null && stopped === null) await killTree(up.child.pid!);
    removeWorkDir(platform.tmp);
  };
  try {
    await loginToUp(platform.browser, api, platform.env, "ada@example.com");
    await platform.browser.close();
    await initProject(dir, chaosProjectSource(0, ledgerUrl));
    const push = async (build: number): Promise<string> => {
      writeFileSync(path.join(dir, "src/index.ts"), chaosProjectSource(build, ledgerUrl));
      for (let attempt = 1; ; attempt++) {
        const pushed = await runCli(["push", dir], { env: platform.env, timeoutMS: 180_000 });
        const opened = /Open (http:\/\/\S+?)\/?$/m.exec(pushed.stdout);
        if (pushed.code === 0 && opened) return opened[1]!;
        if (attempt === PUSH_TRIES)
          throw new Error(
            `platform push of build ${build} failed ${PUSH_TRIES} times:\n${pushed.stdout}\n${pushed.stderr}`,
          );
        log(`push of build ${build} failed (exit ${pushed.code}), trying again: ${pushed.stderr.trim().slice(0, 300)}`);
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    };
    const url = await push(0);
    return {
      url,
      fetch: loopbackFetch,
      target: {
        pid: () => up.child.pid!,
        restart: async () => {
          for (let attempt = 1; ; attempt++) {
            up = spawnCli(stateArgs, platform.env);
            try {
              await up.waitFor(new RegExp(`Platform on http://127\\.0\\.0\\.1:${port}`), 120_000);
              return;
            } catch (error) {
              // It picks its internal ports free, then binds them: one taken meanwhile fails the start.
              if (attempt === RESTART_TRIES || !/Address already in use/.test(up.output())) throw error;
              log(`platform up did not restart (${up.output().trim().split("\n")[0]}); starting it again`);
            }
          }
        },
        push: async (build) => {
          await push(build);
        },
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

function timeout(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms));
}
