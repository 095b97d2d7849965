import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { randomHex } from "#src/core/crypto/encoding.ts";
import type { SessionCode } from "#src/objects/SessionCode.ts";
import { consumeSessionCode } from "#src/plugins/kit/sessionCodes.ts";

const hexCode = () => randomHex(32);

async function newCode(pluginId = "chatserver", expiresAt = Date.now() + 120_000): Promise<string> {
  const code = hexCode();
  const created = await env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code)).create({
    code,
    projectId: 7,
    userId: 3,
    pluginId,
    expiresAt,
  });
  expect(created).toBe(true);
  return code;
}

describe("SessionCode actor", () => {
  it("is consumed once: of 20 concurrent consumers exactly one wins, the rest see `used`", async () => {
    const code = await newCode();
    const results = await Promise.all(Array.from({ length: 20 }, () => consumeSessionCode(env, code, "chatserver")));
    expect(results.filter((r) => r.ok)).toEqual([{ ok: true, projectId: 7, userId: 3, pluginId: "chatserver" }]);
    expect(results.filter((r) => !r.ok).every((r) => !r.ok && r.reason === "used")).toBe(true);
  });

  it.each([
    ["unknown (never created)", async (): Promise<string> => hexCode(), "chatserver", "unknown"],
    ["not 64 hex characters", async (): Promise<string> => "ABC", "chatserver", "unknown"],
    ["expired", async (): Promise<string> => newCode("chatserver", Date.now() - 1), "chatserver", "expired"],
    ["for another plugin", async (): Promise<string> => newCode("workspace"), "chatserver", "wrong_plugin"],
  ] as const)("refuses a code that is %s", async (_name, make, pluginId, reason) => {
    const code = await make();
    expect(await consumeSessionCode(env, code, pluginId)).toEqual({ ok: false, reason });
  });

  it("a wrong plugin does not use the code up; the right one still can", async () => {
    const code = await newCode("workspace");
    expect(await consumeSessionCode(env, code, "chatserver")).toEqual({ ok: false, reason: "wrong_plugin" });
    expect((await consumeSessionCode(env, code, "workspace")).ok).toBe(true);
    expect(await consumeSessionCode(env, code, "workspace")).toEqual({ ok: false, reason: "used" });
  });

  it("refuses to be created twice and forgets everything at its alarm", async () => {
    const code = await newCode();
    const stub = env.SESSION_CODES.get(env.SESSION_CODES.idFromName(code));
    expect(
      await stub.create({ code, projectId: 8, userId: 9, pluginId: "workspace", expiresAt: Date.now() + 1000 }),
    ).toBe(false);
    await runInDurableObject(stub, async (instance: SessionCode) => {
      await instance.alarm();
    });
    expect(await consumeSessionCode(env, code, "chatserver")).toEqual({ ok: false, reason: "unknown" });
  });
});
