import { PlatformError } from "../../core/errors.ts";

/**
 * What the engine stores: start data, scratchpad writes and results must be
 * plain JSON values.
 *
 * The rule is strict on purpose: a value is accepted only when
 * `JSON.parse(JSON.stringify(value))` gives it back unchanged, so what a later
 * step or `workflow.get` reads is exactly what was written. Accepted:
 * `null`, booleans, finite numbers, strings, dense arrays and plain objects
 * (prototype `Object.prototype` or `null`, string keys) of those.
 * Rejected with `invalid_input`: `undefined` (anywhere below the top level),
 * functions, symbols, BigInt, `NaN`/`Infinity`, sparse arrays, cycles,
 * symbol keys, nesting deeper than {@link MAX_JSON_DEPTH}, and every class
 * instance (Date, Map, Set, RegExp, typed arrays, Error, your own classes).
 * Convert those yourself (e.g. `date.toISOString()`).
 */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export type JsonObject = { readonly [key: string]: JsonValue };

/** Nesting limit: deeper values are almost always a bug, and recursion must stay bounded. */
export const MAX_JSON_DEPTH = 100;

/**
 * Largest serialized payload of one event, in UTF-8 bytes of its JSON:
 * 1 MiB, the same limit Cloudflare Workflows puts on a step result.
 * Applies to workflow_created (the start data), step_completed (the step's
 * writes) and workflow_completed (the result).
 */
export const MAX_EVENT_PAYLOAD_BYTES = 1024 * 1024;

/**
 * Validates `value` against the strict JSON rule and returns a deep-frozen copy,
 * so later mutation by user code cannot change what gets committed.
 * `what` names the value in the error message, e.g. `workflow "greet" start data`.
 */
export function toJsonValue(value: unknown, what: string): JsonValue {
  return copy(value, what, "", new Set(), 0);
}

function copy(value: unknown, what: string, path: string, ancestors: Set<object>, depth: number): JsonValue {
  const at = () => (path ? `${what} at ${path}` : what);
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value)) throw invalid(`${at()} is ${value}, which JSON cannot represent`);
      return value;
    case "undefined":
      throw invalid(`${at()} is undefined; use null or leave the key out`);
    case "bigint":
      throw invalid(`${at()} is a BigInt; convert it to a string or number`);
    case "function":
    case "symbol":
      throw invalid(`${at()} is a ${typeof value}, which is not JSON`);
  }
  if (value === null) return null;
  const object = value as object;
  if (depth >= MAX_JSON_DEPTH) throw invalid(`${at()} is nested deeper than ${MAX_JSON_DEPTH} levels`);
  if (ancestors.has(object)) throw invalid(`${at()} contains a cycle`);
  ancestors.add(object);
  try {
    if (Array.isArray(object)) {
      if (Object.getPrototypeOf(object) !== Array.prototype)
        throw invalid(`${at()} is an array subclass; use a plain array`);
      const out: JsonValue[] = [];
      for (let i = 0; i < object.length; i++) {
        if (!(i in object)) throw invalid(`${at()} is a sparse array (index ${i} is a hole)`);
        out.push(copy(object[i], what, `${path}[${i}]`, ancestors, depth + 1));
      }
      return Object.freeze(out);
    }
    const proto: unknown = Object.getPrototypeOf(object);
    if (proto !== Object.prototype && proto !== null) {
      const kind = (object as { constructor?: { name?: unknown } }).constructor?.name;
      throw invalid(
        `${at()} is ${typeof kind === "string" && kind ? `a ${kind}` : "a class instance"}; only plain objects and arrays are stored`,
      );
    }
    if (Object.getOwnPropertySymbols(object).length > 0) throw invalid(`${at()} has symbol keys, which JSON drops`);
    // Object.fromEntries defines own properties, so a "__proto__" key stays data.
    const entries = Object.keys(object).map((key): [string, JsonValue] => [
      key,
      copy((object as Record<string, unknown>)[key], what, path ? `${path}.${key}` : key, ancestors, depth + 1),
    ]);
    return Object.freeze(Object.fromEntries(entries));
  } finally {
    ancestors.delete(object);
  }
}

/** Deep-freezes a value that is already known to be JSON (e.g. just parsed from the store). */
export function freezeJson<T extends JsonValue>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) freezeJson(child as JsonValue);
    Object.freeze(value);
  }
  return value;
}

/**
 * Serializes one event payload and enforces {@link MAX_EVENT_PAYLOAD_BYTES}.
 * Throws `payload_too_large` naming `what` when it does not fit.
 */
export function encodePayload(payload: object, what: string): string {
  const text = JSON.stringify(payload);
  const bytes = utf8ByteLength(text);
  if (bytes > MAX_EVENT_PAYLOAD_BYTES) {
    throw new PlatformError(
      "payload_too_large",
      `${what}: ${bytes} bytes of JSON, but one workflow event holds at most ${MAX_EVENT_PAYLOAD_BYTES} bytes (1 MiB). Store large data elsewhere and pass a reference.`,
      { bytes, limit: MAX_EVENT_PAYLOAD_BYTES },
    );
  }
  return text;
}

/** UTF-8 length without allocating; a lone surrogate counts 3 bytes (JSON.stringify escapes them anyway). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}

function invalid(message: string): PlatformError {
  return new PlatformError("invalid_input", message);
}
