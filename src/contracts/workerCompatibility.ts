/**
 * The Workers runtime every worker of the platform and every project worker runs on: the
 * compatibility date and flags each `wrangler.toml`, the local platform and a pushed project's
 * upload metadata name (a tooling test holds every `wrangler.toml` to these).
 */
export const COMPATIBILITY_DATE = "2026-10-30";
export const COMPATIBILITY_FLAGS: readonly string[] = ["nodejs_compat"];
