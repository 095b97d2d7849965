import { describe, expect, it } from "vitest";
import { CliError } from "#src/dev/cli/commandLine.ts";
import { resolveRunId } from "#src/dev/cli/workflow/resolveRunId.ts";

const ids = ["3f2a9c1d-aaaa", "3f2a0000-bbbb", "77777777-cccc", "3f2a9c1d-dddd"];
/** Two runs were started with a workflow id of their own (`workflow start --id`): the newest is listed first. */
const workflowIds: Record<string, string> = {
  "77777777-cccc": "bob-1",
  "3f2a9c1d-dddd": "bob-1",
  "3f2a0000-bbbb": "3f2a9",
};
const summary = (id: string) => ({
  id,
  workflowId: workflowIds[id] ?? id,
  name: "w",
  status: "running" as const,
  createdAt: 0,
  updatedAt: 0,
});

/** Runs listed two per page; `get` knows only whole ids. */
function fakeApi(known = ids) {
  const pages: (string | undefined)[] = [];
  return {
    pages,
    get: async (runId: string) => {
      if (!known.includes(runId)) throw new CliError(`Workflow run "${runId}" does not exist.`);
      return { id: runId };
    },
    list: async (cursor: string | undefined) => {
      pages.push(cursor);
      const from = cursor ? Number(cursor) : 0;
      const next = from + 2 < known.length ? String(from + 2) : undefined;
      return { runs: known.slice(from, from + 2).map(summary), ...(next ? { cursor: next } : {}) };
    },
  };
}

describe("resolveRunId: a run id, else a workflow id, else a unique prefix of a run id", () => {
  it.each([
    { given: "77777777-cccc", runId: "77777777-cccc", found: { id: "77777777-cccc" }, pages: 0 },
    { given: "7777", runId: "77777777-cccc", found: undefined, pages: 2 },
    { given: "3f2a0", runId: "3f2a0000-bbbb", found: undefined, pages: 2 },
    // The workflow id's newest run (listed first), found before the list ends.
    { given: "bob-1", runId: "77777777-cccc", found: undefined, pages: 2 },
    // A workflow id wins over the run ids it is a prefix of (3f2a9c1d-aaaa, 3f2a9c1d-dddd).
    { given: "3f2a9", runId: "3f2a0000-bbbb", found: undefined, pages: 1 },
  ])("$given → $runId, listing $pages page(s)", async ({ given, runId, found, pages }) => {
    const api = fakeApi();
    expect(await resolveRunId(given, api.get, api.list)).toEqual(found ? { runId, found } : { runId });
    expect(api.pages).toHaveLength(pages);
  });

  it("a prefix of several runs is a usage error naming some of them", async () => {
    const api = fakeApi();
    const error = (await resolveRunId("3f2a9c1d", api.get, api.list).catch((e: unknown) => e)) as CliError;
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(2);
    expect(error.message).toBe(
      '"3f2a9c1d" names more than one run (3f2a9c1d-aaaa, 3f2a9c1d-dddd…): give more of the id.',
    );
  });

  it("no match says what was looked for, after every page", async () => {
    const api = fakeApi();
    const error = (await resolveRunId("nope", api.get, api.list).catch((e: unknown) => e)) as CliError;
    expect(error).toBeInstanceOf(CliError);
    expect(error.exitCode).toBe(1);
    expect(error.message).toBe('No workflow run has the id or workflow id "nope", and no run id starts with it.');
    expect(api.pages).toEqual([undefined, "2"]);
  });
});
