import type { ChaosFetch } from "./loopbackFetch.ts";
import type { NemesisTarget } from "./nemesis.ts";

/** A platform serving the chaos project, as the driver drives it: where the project answers, and the nemesis's target. */
export interface ChaosPlatform {
  /** The project's address (no trailing slash). */
  url: string;
  /** How the clients and the driver reach `url`. */
  fetch: ChaosFetch;
  target: NemesisTarget;
  /** Stops it (a clean stop, else SIGKILL of its tree); its files are the work dir's. */
  stop(): Promise<void>;
}
