import { runTokenPath } from "./runTokenPath.ts";

/**
 * Where a project worker takes a run's callbacks:
 * `/__platform/callbacks/<run id>/<token>` (ctx.callbackURL), public as every
 * run-and-token path is (runTokenPath.ts).
 */
const callbacks = runTokenPath("/__platform/callbacks/");

/** `/__platform/callbacks/<one segment>/<one segment>`, nothing else. */
export const isRunCallbackRoutePath = callbacks.matches;

/** The path of a run's callback URL. */
export const runCallbackRoutePath = callbacks.of;

/** The run id and token a callback path names; null for any other shape. */
export const parseRunCallbackRoutePath = callbacks.parse;
