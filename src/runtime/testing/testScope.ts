import type { PlatformEnv } from "../entry/platformEnv.ts";
import { setStepEnvSource } from "../../engine/execution/stepContext.ts";
import { platformRuntime } from "../entry/platformRuntime.ts";
import { projectVariables } from "../entry/projectVariables.ts";
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

// Steps read `ctx.env` from the environment installed for their turn, as in a worker.
setStepEnvSource(() => projectVariables(platformRuntime.env));
let turn: Promise<unknown> = Promise.resolve();

/** The environment every run and request of this test process sees (created on first use). */
export function testEnv(): PlatformEnv {
  env ??= createTestEnv();
  return env;
}

/**
 * The test environment with the project's own variables (a test's `env` option, standing in for
 * `.dev.vars` and `platform secret put`): `env.NAME` in a request, `ctx.env.NAME` in a step.
 */
export function testEnvWith(vars: Readonly<Record<string, string>> | undefined): PlatformEnv {
  return vars ? { ...vars, ...testEnv() } : testEnv();
}

/** Runs `body` in its turn, with the test environment (and `vars`) installed and plugin calls recorded into `recording`. */
export function inTestScope<T>(
  recording: Recording,
  body: () => Promise<T>,
  vars?: Readonly<Record<string, string>>,
): Promise<T> {
  const run = turn.then(async () => {
    platformRuntime.useEnv(testEnvWith(vars));
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
export async function inNestedTestScope<T>(
  recording: Recording,
  body: () => Promise<T>,
  vars?: Readonly<Record<string, string>>,
): Promise<T> {
  const outer = currentRecording();
  // Nested: a run started by a request or a step sees the environment of what started it.
  if (!outer) return inTestScope(recording, body, vars);
  recordInto(recording);
  try {
    return await body();
  } finally {
    recordInto(outer);
  }
}
