import { describe, expect, it } from "vitest";
import { encodePayload, MAX_EVENT_PAYLOAD_BYTES, toJsonValue, utf8ByteLength } from "#src/engine/api/json.ts";
import { thrownCode } from "#test/support/workflow/rejection.ts";

describe("toJsonValue: the strict JSON rule", () => {
  it("accepts plain JSON and returns an equal, deep-frozen copy", () => {
    // JSON.parse makes "__proto__" an own key (an object literal would set the prototype instead).
    const input = {
      ...JSON.parse('{"__proto__": {"c": 1}}'),
      a: [1, "two", null, true, { b: -0.5 }],
      nested: Object.create(null) as object,
    };
    const copy = toJsonValue(input, "x") as Record<string, unknown>;
    expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse(JSON.stringify(input)));
    expect(copy).not.toBe(input);
    expect(Object.isFrozen(copy)).toBe(true);
    expect(Object.isFrozen((copy.a as unknown[])[4])).toBe(true);
    // "__proto__" stays an ordinary key, it does not replace the prototype.
    expect(Object.keys(copy)).toContain("__proto__");
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it("accepts a shared (non-cyclic) reference twice", () => {
    const shared = { v: 1 };
    expect(toJsonValue({ a: shared, b: shared }, "x")).toEqual({ a: { v: 1 }, b: { v: 1 } });
  });

  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  class Money {
    cents = 5;
  }
  const rejected: [string, unknown][] = [
    ["a function", { f: () => 1 }],
    ["undefined inside an object", { a: undefined }],
    ["undefined inside an array", [undefined]],
    ["a BigInt", { n: 10n }],
    ["a symbol", Symbol("s")],
    ["NaN", { n: NaN }],
    ["Infinity", [Infinity]],
    ["a cycle", cyclic],
    ["a Date", { when: new Date(0) }],
    ["a Map", new Map()],
    ["a class instance", new Money()],
    ["a typed array", new Uint8Array(2)],
    // biome-ignore lint/suspicious/noSparseArray: the hole is what this case rejects.
    ["a sparse array", [1, , 3]],
    ["symbol keys", { [Symbol("k")]: 1 }],
    ["nesting past the depth limit", JSON.parse("[".repeat(150) + "]".repeat(150))],
  ];
  for (const [what, value] of rejected) {
    it(`rejects ${what} with invalid_input`, () => {
      expect(thrownCode(() => toJsonValue(value, "start data"))).toBe("invalid_input");
    });
  }

  it("names where the bad value is", () => {
    expect(() => toJsonValue({ order: { items: [1, () => 2] } }, "start data")).toThrow(
      /start data at order\.items\[1\] is a function/,
    );
  });
});

describe("encodePayload: 1 MiB per event payload", () => {
  it("accepts a payload of exactly the limit and refuses one byte more with payload_too_large", () => {
    const overhead = JSON.stringify({ s: "" }).length;
    const fits = { s: "x".repeat(MAX_EVENT_PAYLOAD_BYTES - overhead) };
    expect(encodePayload(fits, "p").length).toBe(MAX_EVENT_PAYLOAD_BYTES);
    expect(thrownCode(() => encodePayload({ s: "x".repeat(MAX_EVENT_PAYLOAD_BYTES - overhead + 1) }, "p"))).toBe(
      "payload_too_large",
    );
  });

  it("counts UTF-8 bytes, not UTF-16 units", () => {
    expect(utf8ByteLength("aé€😀")).toBe(1 + 2 + 3 + 4);
    const overhead = JSON.stringify({ s: "" }).length;
    // 3-byte characters: a third as many characters already fill the limit.
    const count = Math.floor((MAX_EVENT_PAYLOAD_BYTES - overhead) / 3) + 1;
    expect(thrownCode(() => encodePayload({ s: "€".repeat(count) }, "p"))).toBe("payload_too_large");
  });
});
