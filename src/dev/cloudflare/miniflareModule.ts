import { createRequire } from "node:module";
import type * as MiniflareTypes from "miniflare";

/**
 * Miniflare's classes and functions, loaded with require(). Miniflare is one
 * CommonJS file of 5.8 MB, and an ESM `import { … } from "miniflare"` makes
 * Node lex all of it for the names it exports: half a second of CPU on every
 * `platform dev` and `platform up` start (measured here: 1.06 s to import it,
 * 0.50 s to require it). Types still come from `import type … "miniflare"`.
 */
const miniflare = createRequire(import.meta.url)("miniflare") as typeof MiniflareTypes;

export const { Miniflare, Log, LogLevel, NoOpLog, Response: MiniflareResponse, convertV4MiniflareOptions } = miniflare;
export type Miniflare = MiniflareTypes.Miniflare;
export type Log = MiniflareTypes.Log;
export type LogLevel = MiniflareTypes.LogLevel;
export type NoOpLog = MiniflareTypes.NoOpLog;
export type MiniflareResponse = MiniflareTypes.Response;
