import { describe, expect, it } from "vitest";
import { FAKE_OPERATOR_HEADER, refuseWithoutOperator } from "#src/dev/fakes/operatorGate.ts";

const TOKEN = "a".repeat(64);
const at = (path: string, token?: string) =>
  new Request(`http://127.0.0.1:9000${path}`, {
    headers: token === undefined ? {} : { [FAKE_OPERATOR_HEADER]: token },
  });

describe("refuseWithoutOperator: who may use a fake's /__fake/* routes", () => {
  it.each([
    ["/__fake/outbox", undefined, 401, "operator_token_required"],
    ["/__fake/recorded", "", 401, "operator_token_required"],
    ["/__fake/trigger", "b".repeat(64), 403, "operator_token_invalid"],
    ["/__fake/state", TOKEN.slice(1), 403, "operator_token_invalid"],
  ])("under platform up, %s with token %j answers %i %s", async (path, token, status, code) => {
    const refused = refuseWithoutOperator(at(path, token), TOKEN);
    expect(refused?.status).toBe(status);
    const body = (await refused!.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe(code);
    expect(body.error.message).toContain(FAKE_OPERATOR_HEADER);
  });

  it.each([
    ["the operator's token on an inspection route", "/__fake/outbox", TOKEN, TOKEN],
    ["a provider route (it demands the provider's own credentials)", "/emails", undefined, TOKEN],
    ["a path that only looks like one", "/__fakeoutbox", undefined, TOKEN],
    ["platform dev: no token configured", "/__fake/outbox", undefined, undefined],
  ])("lets through %s", (_, path, token, configured) => {
    expect(refuseWithoutOperator(at(path, token), configured)).toBeNull();
  });
});
