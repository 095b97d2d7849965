/**
 * The account's live-run budget on the platform's side: `POST /internal/workflow/live-runs/hold`
 * and `/release` (src/workers/api/liveRunRoutes.ts), the `LiveRunBudget` actor behind them, and a
 * project's client of them (src/objects/liveRunSlots.ts), all real; the cap is the API worker's
 * var `MAX_LIVE_RUNS_PER_ACCOUNT`.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LIVE_RUN_ROUTES } from "#src/contracts/liveRunBudget.ts";
import { IDENTITY_HEADER, signRequestToken } from "#src/core/requestToken.ts";
import { accountLiveRunBudget } from "#src/objects/LiveRunBudget.ts";
import { platformLiveRunSlots } from "#src/objects/liveRunSlots.ts";
import { DEFAULT_MAX_LIVE_RUNS_PER_ACCOUNT } from "#src/workers/api/liveRunsPerAccount.ts";
import type { ProjectRow } from "#src/workers/db/projectsTable.ts";
import {
  apiHarness,
  callApi,
  createProject,
  expectError,
  projectRow,
  userWithProject,
} from "#test/support/workerd/index.ts";
import { liveRunPlatform } from "#test/support/workerd/liveRunPlatform.ts";
import { platformRejection } from "#test/support/workerd/plugins.ts";

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
const liveOf = (row: ProjectRow) => accountLiveRunBudget(env.LIVE_RUN_BUDGET, row.owner_id).live();
const capOf = (cap: string) => apiHarness({ env: { MAX_LIVE_RUNS_PER_ACCOUNT: cap } }).env;

/** A signed call as a project's worker makes it, answered whole. */
async function post(row: ProjectRow, path: string, body: unknown, cap = "5") {
  const text = JSON.stringify(body);
  const token = await signRequestToken(
    "identity",
    {
      method: "POST",
      pathAndQuery: path,
      body: text,
    },
    { projectId: row.id, secret: row.worker_secret },
  );
  return callApi("POST", path, {
    body: text,
    headers: { "content-type": "application/json", [IDENTITY_HEADER]: token },
    env: capOf(cap),
  });
}

describe("the account's live-run budget (MAX_LIVE_RUNS_PER_ACCOUNT, default 10,000)", () => {
  it("the default is 10,000", () => {
    expect(DEFAULT_MAX_LIVE_RUNS_PER_ACCOUNT).toBe(10_000);
  });

  it("holds within the cap; a fan-out that would pass it is 429 rate_limited naming the cap, and holds nothing", async () => {
    const { row } = await userWithProject("ada@example.com", "ada-runs");
    const slots = platformLiveRunSlots(liveRunPlatform(row, capOf("5")));

    expect(await slots.hold(ids("a", 3))).toEqual(ids("a", 3));
    const refused = await platformRejection(slots.hold(ids("fan", 3)));
    expect(refused.code).toBe("rate_limited");
    expect(refused.message).toBe(
      "Account live-run budget of 5 runs reached: the account that owns this project has 3 runs live (started and not ended) across all its projects, and these 3 runs would pass it, so none was started. Start them once runs have ended, or ask the platform's operator to raise MAX_LIVE_RUNS_PER_ACCOUNT.",
    );
    expect(refused.details).toEqual({ scope: "account", limit: 5, live: 3, asked: 3 });
    expect(await liveOf(row)).toBe(3);

    // The same answer on the wire: 429.
    const body = await expectError(
      await post(row, LIVE_RUN_ROUTES.hold, { runIds: ids("fan", 3) }),
      429,
      "rate_limited",
    );
    expect(body.error.message).toMatch(/^Account live-run budget of 5 runs reached/);

    // Within it: held; held again (a retried start): nothing more, and not refused at the cap.
    expect(await slots.hold(ids("fan", 2))).toEqual(ids("fan", 2));
    expect(await slots.hold([...ids("a", 3), ...ids("fan", 2)])).toEqual([]);
    expect(await liveOf(row)).toBe(5);
    await expect(slots.hold(["one-more"])).rejects.toMatchObject({ code: "rate_limited" });
  });

  it("ended runs free their slots once; the account's projects share the cap; another account cannot release them", async () => {
    const ada = await userWithProject("ada@example.com", "ada-one");
    const adaTwo = await projectRow((await createProject(ada.user.token, "ada-two")).slug);
    const bob = await userWithProject("bob@example.com", "bob-one");
    const one = platformLiveRunSlots(liveRunPlatform(ada.row, capOf("5")));
    const two = platformLiveRunSlots(liveRunPlatform(adaTwo, capOf("5")));
    const bobs = platformLiveRunSlots(liveRunPlatform(bob.row, capOf("5")));

    await one.hold(ids("r", 4));
    await two.hold(["t-0"]);
    await expect(two.hold(["t-1"])).rejects.toMatchObject({ code: "rate_limited" });

    // Bob names Ada's run ids: his own account's actor, where they are not held. Ada's project two names project one's.
    const bobRelease = await post(bob.row, LIVE_RUN_ROUTES.release, { runIds: ids("r", 4) });
    expect(await bobRelease.json()).toEqual({ released: 0 });
    const crossRelease = await post(adaTwo, LIVE_RUN_ROUTES.release, { runIds: ids("r", 4) });
    expect(await crossRelease.json()).toEqual({ released: 0 });
    expect(await liveOf(ada.row)).toBe(5);
    // Bob's account has a budget of its own.
    expect(await bobs.hold(ids("b", 5))).toHaveLength(5);

    // Ada's runs end: their slots come back once; a duplicate end report frees nothing.
    expect(await (await post(ada.row, LIVE_RUN_ROUTES.release, { runIds: ["r-0", "r-1"] })).json()).toEqual({
      released: 2,
    });
    expect(await (await post(ada.row, LIVE_RUN_ROUTES.release, { runIds: ["r-0", "r-1", "never"] })).json()).toEqual({
      released: 0,
    });
    expect(await liveOf(ada.row)).toBe(3);
    expect(await two.hold(["t-1", "t-2"])).toEqual(["t-1", "t-2"]);
    await expect(one.hold(["r-9"])).rejects.toMatchObject({ code: "rate_limited" });
  });

  it.each([
    ["no runIds", {}, "runIds must be a list of 1 to 1000 run ids."],
    ["an empty list", { runIds: [] }, "runIds must be a list of 1 to 1000 run ids."],
    ["1,001 ids", { runIds: ids("x", 1001) }, "runIds must be a list of 1 to 1000 run ids."],
    ["a number", { runIds: ["ok", 7] }, "runIds[1] must be a run id string."],
    ["a path", { runIds: ["../other"] }, "runIds[0] must be a run id string."],
  ])("%s is 400 invalid_input, and holds nothing", async (_name, body, message) => {
    const { row } = await userWithProject("ada@example.com", "ada-bad");
    const refused = await expectError(await post(row, LIVE_RUN_ROUTES.hold, body), 400, "invalid_input");
    expect(refused.error.message).toBe(message);
    expect(await liveOf(row)).toBe(0);
  });

  it("an unsigned or wrongly signed call is 401 and holds nothing", async () => {
    const { row } = await userWithProject("ada@example.com", "ada-unsigned");
    const text = JSON.stringify({ runIds: ["x"] });
    await expectError(
      await callApi("POST", LIVE_RUN_ROUTES.hold, { body: text, headers: { "content-type": "application/json" } }),
      401,
      "unauthorized",
    );
    const forged = await signRequestToken(
      "identity",
      { method: "POST", pathAndQuery: LIVE_RUN_ROUTES.release, body: text },
      { projectId: row.id, secret: "f".repeat(64) },
    );
    await expectError(
      await callApi("POST", LIVE_RUN_ROUTES.release, {
        body: text,
        headers: { "content-type": "application/json", [IDENTITY_HEADER]: forged },
      }),
      401,
      "unauthorized",
    );
    expect(await liveOf(row)).toBe(0);
  });

  it.each(["0", "-1", "ten", "1.5"])(
    "MAX_LIVE_RUNS_PER_ACCOUNT=%j is a misconfiguration: 500 naming the var, nothing held",
    async (cap) => {
      const { row } = await userWithProject("ada@example.com", "ada-misconfigured");
      const body = await expectError(await post(row, LIVE_RUN_ROUTES.hold, { runIds: ["x"] }, cap), 500, "internal");
      expect(body.error.message).toContain(`MAX_LIVE_RUNS_PER_ACCOUNT is "${cap}"`);
      expect(await liveOf(row)).toBe(0);
    },
  );
});
