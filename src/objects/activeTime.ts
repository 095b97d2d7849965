/**
 * Wall time during which each of a set of actors was active: had at least one
 * piece of work (a request, an execution) in flight. Overlapping work on one
 * actor counts once, as Cloudflare bills an object's duration once however many
 * requests it serves at a time; separate actors add up.
 */
export interface ActiveTime {
  /** Work on `actor` began; call the answer once it has ended (a second call does nothing). */
  begin(actor: string): () => void;
  /** Milliseconds of activity summed over actors, the spans still open included up to now. */
  totalMS(): number;
}

export function createActiveTime(now: () => number): ActiveTime {
  const open = new Map<string, { inFlight: number; since: number }>();
  let closedMS = 0;
  return {
    begin(actor) {
      const span = open.get(actor);
      if (span) span.inFlight++;
      else open.set(actor, { inFlight: 1, since: now() });
      let ended = false;
      return () => {
        if (ended) return;
        ended = true;
        const current = open.get(actor)!;
        if (--current.inFlight > 0) return;
        closedMS += now() - current.since;
        open.delete(actor);
      };
    },
    totalMS() {
      const at = now();
      let total = closedMS;
      for (const span of open.values()) total += at - span.since;
      return total;
    },
  };
}
