import { describe, expect, it } from "vitest";
import type { LogEntry } from "#src/console/public/console/logLines.js";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { followWorkflowSteps } from "#src/dev/cli/dev/output/followWorkflowSteps.ts";
import { type LogLine, showProjectLog } from "#src/dev/cli/logs/followProjectLog.ts";
import { FIRST_RETRY_MS, MAX_RETRY_MS } from "#src/dev/cli/logs/logReader.ts";
import type { PlatformTarget, requestPlatformApi } from "#src/dev/cli/platformTarget.ts";

// Nothing listens on port 9 (discard): the workflow steps' follower finds no platform, as during a restart.
const TARGET: PlatformTarget = { apiUrl: "http://127.0.0.1:9", token: "t", slug: "shop" };
const T0 = Date.UTC(2026, 10, 29, 1, 0, 0);
const UNREACHABLE = new CliError(`Cannot reach the platform API at ${TARGET.apiUrl}: fetch failed`);

const line = (seq: number): LogEntry => ({ seq, at: T0 + seq, kind: "console", level: "log", message: `line ${seq}` });
const page = (cursor: number, ...seqs: number[]) => ({
  status: 200,
  ok: true,
  json: { entries: seqs.map(line), cursor } as never,
});
const status = (code: number, message?: string) => ({
  status: code,
  ok: false,
  json: message ? { error: { code: "x", message } } : {},
});

type Answer = ReturnType<typeof page> | ReturnType<typeof status> | CliError;

/** A follower against scripted answers, with an injected pause: no clock, no platform. */
async function follow(answers: Answer[], options: { follow?: boolean; targets?: (PlatformTarget | CliError)[] } = {}) {
  const controller = new AbortController();
  const printed: string[] = [];
  const notes: string[] = [];
  const sleeps: number[] = [];
  const queries: string[] = [];
  const targets = [...(options.targets ?? [])];
  const request = (async (_target: PlatformTarget, _method: string, path: string) => {
    queries.push(path.slice(path.indexOf("?") + 1));
    const answer = answers.shift();
    if (!answer) {
      controller.abort();
      return page(0);
    }
    if (answer instanceof Error) throw answer;
    return answer;
  }) as unknown as typeof requestPlatformApi;
  const outcome = await showProjectLog(
    () => {
      const target = targets.shift() ?? TARGET;
      if (target instanceof Error) throw target;
      return target;
    },
    {
      follow: options.follow ?? true,
      print: (shown: LogLine) => printed.push(shown.text),
      note: (text) => notes.push(text),
      signal: controller.signal,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
      request,
    },
  ).then(
    () => null,
    (error: Error) => error.message,
  );
  return { printed, notes, sleeps, queries, outcome };
}

describe("platform logs --follow waits for the platform it follows", () => {
  it("started while the platform comes up: waits, with one note, then prints the log", async () => {
    const run = await follow([UNREACHABLE, status(503), UNREACHABLE, page(2, 1, 2)]);
    expect(run.outcome).toBeNull();
    expect(run.printed).toEqual(["line 1", "line 2"]);
    expect(run.sleeps).toEqual([FIRST_RETRY_MS, FIRST_RETRY_MS * 2, FIRST_RETRY_MS * 4]);
    expect(run.notes).toEqual([
      `Cannot reach the platform API at ${TARGET.apiUrl}: fetch failed; waiting for it, trying again (Ctrl-C to stop)…`,
      `The platform API at ${TARGET.apiUrl} answers again; following on.`,
    ]);
  });

  it("rides out a restart and goes on from the last cursor: no line lost, none twice", async () => {
    const run = await follow([page(2, 1, 2), page(3, 3), UNREACHABLE, UNREACHABLE, status(502), page(5, 4, 5)]);
    expect(run.printed).toEqual(["line 1", "line 2", "line 3", "line 4", "line 5"]);
    expect(run.queries).toEqual([
      "limit=100",
      "after=2&waitMS=10000",
      "after=3&waitMS=10000",
      "after=3&waitMS=10000",
      "after=3&waitMS=10000",
      "after=3&waitMS=10000",
      "after=5&waitMS=10000",
    ]);
    expect(run.notes).toHaveLength(2);
  });

  it("waits for a `platform dev` not started yet (its target resolved again for each read)", async () => {
    const none = new CliError("No `platform dev` is running for /work/shop, and no platform is named: start it.");
    const run = await follow([page(1, 1)], { targets: [none, none] });
    expect(run.printed).toEqual(["line 1"]);
    expect(run.notes[0]).toBe(
      "No `platform dev` is running for /work/shop, and no platform is named: start it; waiting for it, trying again (Ctrl-C to stop)…",
    );
  });

  it(`pauses at most ${MAX_RETRY_MS} ms between reads`, async () => {
    const run = await follow([...Array.from({ length: 8 }, () => UNREACHABLE), page(1, 1)]);
    expect(run.sleeps).toEqual([250, 500, 1000, 2000, 4000, 5000, 5000, 5000]);
  });

  it.each<[string, Answer[], boolean, string]>([
    ["a refusal ends a follower with the API's words", [status(404, "No project shop.")], true, "No project shop."],
    [
      "a refusal after a restart, too",
      [page(1, 1), UNREACHABLE, status(401, "Invalid token.")],
      true,
      "Invalid token.",
    ],
    ["without --follow, an unreachable platform is the answer", [UNREACHABLE], false, UNREACHABLE.message],
    ["without --follow, a 503 is the answer", [status(503)], false, "The platform API answered 503."],
  ])("%s", async (_label, answers, following, message) => {
    const run = await follow(answers, { follow: following });
    expect(run.outcome).toBe(message);
  });

  it("the workflow steps' follower answers nothing, rather than failing, while the platform is unreachable", async () => {
    const steps = followWorkflowSteps({ ...TARGET, print: () => {} });
    try {
      await expect(steps.tick()).resolves.toBeUndefined();
    } finally {
      steps.stop();
    }
  });
});
