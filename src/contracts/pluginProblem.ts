/**
 * Trouble of a plugin as a whole (the shared bot cannot hold its Gateway
 * session), as its connections' health shows it: what stable `code`, what it
 * means (`cause`) and what to do (`fix`).
 */
export interface PluginProblem {
  /** Stable, e.g. `close_4014`. */
  code: string;
  cause: string;
  fix: string;
}
