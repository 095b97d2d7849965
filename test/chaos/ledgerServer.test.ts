import { afterEach, describe, expect, it } from "vitest";
import { type LedgerServer, startLedgerServer } from "./ledgerServer.ts";

let ledger: LedgerServer | undefined;
afterEach(async () => {
  await ledger?.close();
});

describe("startLedgerServer", () => {
  it("records each attempt a step posts, duplicates included (steps run at least once)", async () => {
    ledger = await startLedgerServer();
    const attempt = { runId: "run_1", step: "start", attempt: 1 };
    for (let i = 0; i < 2; i++) {
      const response = await fetch(`${ledger.url}/attempts`, { method: "POST", body: JSON.stringify(attempt) });
      expect(response.status).toBe(204);
    }
    expect(ledger.attempts()).toEqual([attempt, attempt]);
  });

  it("records the build that ran an attempt when the step names one", async () => {
    ledger = await startLedgerServer();
    const attempt = { runId: "run_1", step: "start", attempt: 1, build: 2 };
    const response = await fetch(`${ledger.url}/attempts`, { method: "POST", body: JSON.stringify(attempt) });
    expect(response.status).toBe(204);
    expect(ledger.attempts()).toEqual([attempt]);
  });

  it.each([
    { body: "not json", status: 400, path: "/attempts" },
    { body: JSON.stringify({ runId: "run_1", step: "start" }), status: 400, path: "/attempts" },
    { body: JSON.stringify({ runId: "run_1", step: "start", attempt: 1, build: "2" }), status: 400, path: "/attempts" },
    { body: "{}", status: 404, path: "/other" },
  ])("answers $status to $body at $path and records nothing", async ({ body, status, path }) => {
    ledger = await startLedgerServer();
    const response = await fetch(`${ledger.url}${path}`, { method: "POST", body });
    expect(response.status).toBe(status);
    expect(ledger.attempts()).toEqual([]);
  });
});
