import { CliError } from "../commandLine.ts";

type Values = Record<string, string | boolean | undefined>;

/**
 * The run filter flags of `platform workflow list`, `cancel` and `rerun`, as
 * `workflow.list`'s filter fields: `--status --name --step --since --until
 * --error --id-prefix --version --rerun-of`. The engine checks the values
 * (the API answers `invalid_input` naming the field); only times are read
 * here.
 */
export const RUN_FILTER_FLAGS = [
  ["status", "status"],
  ["name", "name"],
  ["step", "step"],
  ["since", "since"],
  ["until", "until"],
  ["error", "error"],
  ["id-prefix", "idPrefix"],
  ["version", "version"],
  ["rerun-of", "rerunOf"],
] as const;

export const RUN_FILTER_OPTIONS: readonly string[] = RUN_FILTER_FLAGS.map(([flag]) => flag);

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A time flag: a duration before `now` (`90s`, `15m`, `2h`, `7d`), epoch
 * milliseconds, or an ISO 8601 date (`2026-11-25`, `2026-11-25T10:00Z`).
 */
export function parseTimeOption(flag: string, text: string, now: number): number {
  const relative = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text);
  if (relative) return now - Number(relative[1]) * UNIT_MS[relative[2]!]!;
  if (/^\d{1,16}$/.test(text)) return Number(text);
  const parsed = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(parsed))
    throw new CliError(
      `--${flag} must be a duration ago (90s, 15m, 2h, 7d), epoch milliseconds or an ISO date (2026-11-25T10:00Z), got "${text}".`,
      2,
    );
  return parsed;
}

/** The filter the flags give, as `workflow.list`'s fields (empty when no flag is given). */
export function runFilterOf(values: Values, now: number): Record<string, string | number> {
  const filter: Record<string, string | number> = {};
  for (const [flag, field] of RUN_FILTER_FLAGS) {
    const value = values[flag];
    if (typeof value !== "string") continue;
    filter[field] = field === "since" || field === "until" ? parseTimeOption(flag, value, now) : value;
  }
  return filter;
}

/** The same filter as flags again, for the lines the CLI prints (`platform workflow cancel --status running …`). */
export function filterAsFlags(filter: Record<string, string | number>): string {
  return RUN_FILTER_FLAGS.filter(([, field]) => filter[field] !== undefined)
    .map(([flag, field]) => `--${flag} ${filter[field]}`)
    .join(" ");
}
