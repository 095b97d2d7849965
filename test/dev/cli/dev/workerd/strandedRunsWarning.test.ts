import { describe, expect, it } from "vitest";
import { INTERNAL_HEADER, verifyRequestToken } from "#src/core/requestToken.ts";
import { strandedRunsWarning } from "#src/dev/cli/dev/workerd/strandedRunsWarning.ts";

const project = { id: 7, workerSecret: "s".repeat(64) };
const metadata = {
  workflows: [{ name: "order", steps: ["start", "approval"], maxAttempts: 3, stepTimeoutMS: 30_000 }],
};

function projectAnswering(status: number, body: unknown) {
  const calls: { url: string; body: string; verified: unknown }[] = [];
  const fetch = async (url: string, init?: RequestInit) => {
    const body_ = String(init?.body);
    const verified = await verifyRequestToken(
      "internal",
      new Headers(init?.headers).get(INTERNAL_HEADER),
      { method: "POST", pathAndQuery: new URL(url).pathname, body: body_ },
      { lookupSecret: (id) => (id === "7" ? project.workerSecret : null) },
    );
    calls.push({ url, body: body_, verified });
    return Response.json(body, { status });
  };
  return { calls, fetch };
}

describe("platform dev: the stranded-runs check as a warning on rebuild", () => {
  it("lists the stranded runs and the way out, asking the project with a signed call", async () => {
    const { calls, fetch } = projectAnswering(200, {
      count: 1,
      runs: [{ runId: "run-1", workflow: "order", step: "approve", status: "running", missing: "step" }],
    });
    expect(await strandedRunsWarning(fetch, project, metadata)).toEqual([
      "Warning: this code strands 1 live workflow run(s):",
      '  run-1  order  approve  (step "approve" is gone)',
      'Each fails ("has no step …") the next time it moves: at the next recovery sweep (each minute) if nothing will wake it; a sleeping or retrying run, or one waiting for an event with a timeout, when that time comes (or its event arrives); a paused run when it is resumed.',
      'Keep the old step name with workflow(name, steps, { renamed: { oldStep: "newStep" } }). `platform push` refuses such a version unless --force.',
    ]);
    expect(calls).toHaveLength(1);
    expect(new URL(calls[0]!.url).pathname).toBe("/__workflow/check");
    expect(JSON.parse(calls[0]!.body)).toEqual({ workflows: [{ name: "order", steps: ["start", "approval"] }] });
    expect(calls[0]!.verified).toEqual({ ok: true, projectId: "7" });
  });

  it.each([
    { name: "nothing stranded", status: 200, body: { count: 0, runs: [] } },
    { name: "a project without workflow routes", status: 404, body: { error: { code: "not_found" } } },
  ])("says nothing for $name", async ({ status, body }) => {
    expect(await strandedRunsWarning(projectAnswering(status, body).fetch, project, metadata)).toEqual([]);
  });
});
