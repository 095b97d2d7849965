import { median, round } from "./stats.ts";

/** Where one measurement sat in an interleaved sequence. */
export interface Placed {
  /** Position in the whole sequence (0-based). */
  order: number;
  /** Seconds since the sequence began, when this measurement began. */
  atSeconds: number;
}

/**
 * `count` pairs of measurements of two contenders in ABBA order (a, b | b, a |
 * a, b | …). On this machine the cost of a fresh actor drifts over minutes, so
 * a pair's two measurements run back to back and the order alternates: slow
 * drift then hits both contenders alike and cancels in each pair's ratio.
 */
export async function interleavedPairs<C extends string, M>(
  contenders: readonly [C, C],
  count: number,
  measure: (contender: C) => Promise<M>,
  onPair: (pair: Record<C, M & Placed>, index: number, sequence: readonly C[]) => void = () => {},
): Promise<Record<C, M & Placed>[]> {
  const began = performance.now();
  const [a, b] = contenders;
  const pairs: Record<C, M & Placed>[] = [];
  let order = 0;
  for (let i = 0; i < count; i++) {
    const sequence = i % 2 === 0 ? [a, b] : [b, a];
    const pair = {} as Record<C, M & Placed>;
    for (const contender of sequence) {
      const placed: Placed = { order: order++, atSeconds: round((performance.now() - began) / 1000, 1) };
      pair[contender] = { ...(await measure(contender)), ...placed };
    }
    pairs.push(pair);
    onPair(pair, i, sequence);
  }
  return pairs;
}

/** The pairs' ratios summarized: median (the figure a target is judged on), min and max. */
export function ratioSpread(ratios: readonly number[]): { medianRatio: number; minRatio: number; maxRatio: number } {
  return { medianRatio: round(median(ratios), 2), minRatio: Math.min(...ratios), maxRatio: Math.max(...ratios) };
}

/** "ours,CF | CF,ours | …": which contender went first in each pair. */
export function pairOrder<C extends string>(
  pairs: readonly Record<C, Placed>[],
  [a, b]: readonly [C, C],
  labels: Record<C, string>,
): string {
  return pairs
    .map((p) => (p[a].order < p[b].order ? `${labels[a]},${labels[b]}` : `${labels[b]},${labels[a]}`))
    .join(" | ");
}
