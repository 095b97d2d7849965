import { describe, expect, it } from "vitest";
import { shortLivedTokens } from "#src/plugins/kit/shortLivedToken.ts";
import { platformRejection, TOKEN_ENCRYPTION_KEY } from "#test/support/workerd/index.ts";

const env = { TOKEN_ENCRYPTION_KEY };
const tokens = shortLivedTokens<{ handle: string }>({
  name: "answerToken",
  context: "test:answer",
  lifetimeMS: 1_000,
  missing: "answerToken is required: pass what your handler received.",
  expired: "answerToken has expired: it lives 1 second.",
});
const other = shortLivedTokens<{ handle: string }>({
  name: "otherToken",
  context: "test:other",
  lifetimeMS: 1_000,
  missing: "otherToken is required.",
  expired: "otherToken has expired.",
});

describe("short-lived tokens", () => {
  it("open for the project they were sealed for, with their claims and expiry, until the lifetime ends", async () => {
    const token = await tokens.seal(env, 7, { handle: "h-1" }, 10_000);
    expect(token).not.toContain("h-1");
    expect(await tokens.open(env, 7, token, 10_000)).toEqual({ handle: "h-1", exp: 11_000 });
    expect(await tokens.open(env, 7, token, 11_000)).toEqual({ handle: "h-1", exp: 11_000 });
  });

  it.each([
    ["a missing", async () => undefined, 7, "answerToken is required: pass what your handler received."],
    ["an empty", async () => "", 7, "answerToken is required: pass what your handler received."],
    ["a non-string", async () => 42, 7, "answerToken is required: pass what your handler received."],
    [
      "an oversized",
      async () => "v1.".padEnd(4097, "A"),
      7,
      "answerToken is required: pass what your handler received.",
    ],
    ["a forged", async () => "v1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", 7, "answerToken is not valid for this project."],
    [
      "another project's",
      () => tokens.seal(env, 8, { handle: "h" }, 10_000),
      7,
      "answerToken is not valid for this project.",
    ],
    [
      "another kind's",
      () => other.seal(env, 7, { handle: "h" }, 10_000),
      7,
      "answerToken is not valid for this project.",
    ],
    ["an expired", () => tokens.seal(env, 7, { handle: "h" }, 8_999), 7, "answerToken has expired: it lives 1 second."],
  ])("refuses %s token with invalid_input", async (_, make, projectId, message) => {
    const error = await platformRejection(tokens.open(env, projectId, await make(), 10_000));
    expect(error.code).toBe("invalid_input");
    expect(error.message).toBe(message);
  });
});
