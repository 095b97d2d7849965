import type { PlatformEnv } from "../entry/platformEnv.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { createTestEnv } from "./pluginFakes.ts";
import { currentRecording, recordInto, type Recording } from "./testRecords.ts";

/**
 * The test kit runs one run or request at a time. Plugin calls find the
 * project's environment through the runtime, as in a worker (one environment
 * per isolate), so the fakes know whose call it is only by what is executing
 * now: two runs or requests driven at once (`Promise.all`, `it.concurrent`)
 * take turns, each with its own recording installed.
 */

let env: PlatformEnv | null = null;
let turn: Promise<unknown> = Promise.resolve();

/** The environment every run and request of this test process sees (created on first use). */
export function testEnv(): PlatformEnv {
  env ??= createTestEnv();
  return env;
}

/** Runs `body` in its turn, with the test environment installed and plugin calls recorded into `recording`. */
export function inTestScope<T>(recording: Recording, body: () => Promise<T>): Promise<T> {
  const run = turn.then(async () => {
    platformRuntime.useEnv(testEnv());
    recordInto(recording);
    try {
      return await body();
    } finally {
      recordInto(null);
    }
  });
  turn = run.catch(() => undefined);
  return run;
}

/**
 * As {@link inTestScope}, but when a run or request of the kit is executing
 * already (a handler or a step started a workflow), inside its turn: the
 * started run records into its own recording, then the caller's resumes.
 */
export async function inNestedTestScope<T>(recording: Recording, body: () => Promise<T>): Promise<T> {
  const outer = currentRecording();
  if (!outer) return inTestScope(recording, body);
  recordInto(recording);
  try {
    return await body();
  } finally {
    recordInto(outer);
  }
}
