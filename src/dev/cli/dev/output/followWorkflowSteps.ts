import { createStepFollower } from "../../../../console/public/console/logLines.js";

export { createStepFollower };

const POLL_MS = 1_000;

/** `platform dev`'s step lines (and `platform logs`'): a follower (logLines.js) ticking once a second against the API. */
export function followWorkflowSteps(input: {
  apiUrl: string;
  token: string;
  slug: string;
  print: (line: string, at: number) => void;
  /** Whether the project (as last built) has workflows at all; no calls while it has none. */
  active?: () => boolean;
  /** Print the steps of runs from this time on at once (a log's recent history); default: only what happens next. */
  since?: number;
  /** Show the platform's own frames of a failed attempt's stack (default: one `… N platform frames` line). */
  platformFrames?: boolean;
}): { stop(): void; tick(): Promise<void> } {
  const get = async <T>(pathAndQuery: string): Promise<T | null> => {
    // A platform restarting (or busy) answers nothing this tick; the next tick asks again.
    try {
      const response = await fetch(input.apiUrl + pathAndQuery, {
        headers: { authorization: `Bearer ${input.token}` },
      });
      return response.ok ? ((await response.json()) as T) : null;
    } catch {
      return null;
    }
  };
  const follower = createStepFollower({ ...input, get });
  const timer = setInterval(() => void follower.tick(), POLL_MS);
  timer.unref();
  const first = follower.tick();
  return {
    stop: () => clearInterval(timer),
    tick: async () => {
      await first;
      await follower.tick();
    },
  };
}
