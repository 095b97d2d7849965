import type { LogEntry } from "../../../console/public/console/logLines.js";
import { CliError } from "../commandLine.ts";
import { type PlatformApiAnswer, type PlatformTarget, requestPlatformApi } from "../platformTarget.ts";

/** The first pause before reading again, doubled after each failure up to {@link MAX_RETRY_MS}. */
export const FIRST_RETRY_MS = 250;
export const MAX_RETRY_MS = 5_000;

export interface LogPage {
  entries: LogEntry[];
  cursor: number;
}

export interface LogReaderOptions {
  /** Whose log, resolved again before each read: a restarted `platform dev` may be on a new port, or not up yet. */
  target: () => PlatformTarget;
  /**
   * Whether to ride out a platform that cannot answer now (unreachable, 5xx, no `platform dev` yet) by
   * reading again after a pause; without it, the first such failure is the answer.
   */
  retry: boolean;
  /** One line when reads start failing (and one when they answer again); not one per attempt. */
  note: (text: string) => void;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  request?: typeof requestPlatformApi;
}

/** A pause that ends early when `signal` aborts. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A refusal by the API (4xx, in its own words): reading again would get the same answer. */
class RefusedRead extends CliError {
  constructor(status: number, json: PlatformApiAnswer) {
    super(json.error?.message ?? `The platform API answered ${status}.`);
  }
}

/**
 * Reads of a project's log (`GET /projects/:slug/logs?<query>`) that, with
 * `retry`, wait for the platform rather than give up: while it cannot be
 * reached, answers 5xx (a workerd starting or restarting) or no `platform dev`
 * runs for the folder, each read is tried again after a pause growing from
 * {@link FIRST_RETRY_MS} to {@link MAX_RETRY_MS}, with one note when the
 * trouble starts and one when it ends. The caller keeps its cursor, so a
 * restart costs it no line the log still holds. A refusal (4xx: a wrong
 * token, no such project) ends the reading with the API's message. Answers
 * `null` once `signal` aborts.
 */
export function logReader(options: LogReaderOptions): {
  read(query: string): Promise<{ page: LogPage; target: PlatformTarget } | null>;
} {
  const request = options.request ?? requestPlatformApi;
  let waiting = false;
  return {
    async read(query) {
      for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
        if (options.signal?.aborted) return null;
        let trouble: string;
        try {
          const target = options.target();
          const answer = await request(target, "GET", `/projects/${encodeURIComponent(target.slug)}/logs?${query}`);
          if (answer.ok) {
            if (waiting) options.note(`The platform API at ${target.apiUrl} answers again; following on.`);
            waiting = false;
            return { page: answer.json as unknown as LogPage, target };
          }
          if (answer.status < 500 || !options.retry) throw new RefusedRead(answer.status, answer.json);
          trouble = `The platform API at ${target.apiUrl} answered ${answer.status}`;
        } catch (error) {
          // Unreachable, or no platform yet, are CliErrors of requestPlatformApi and the target; a refusal is final.
          if (!options.retry || error instanceof RefusedRead || !(error instanceof CliError)) throw error;
          trouble = error.message.replace(/\.$/, "");
        }
        if (!waiting) options.note(`${trouble}; waiting for it, trying again (Ctrl-C to stop)…`);
        waiting = true;
        await options.sleep(delay, options.signal);
      }
    },
  };
}
