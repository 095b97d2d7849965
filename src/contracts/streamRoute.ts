import { runTokenPath } from "./runTokenPath.ts";

/**
 * Where a project worker serves its runs' streams to browsers:
 * `/__platform/streams/<run id>/<token>` (workflow.streamURL), public as
 * every run-and-token path is (runTokenPath.ts).
 */
const streams = runTokenPath("/__platform/streams/");

/** `/__platform/streams/<one segment>/<one segment>`, nothing else. */
export const isStreamRoutePath = streams.matches;

/** The path of a run's stream URL. */
export const streamRoutePath = streams.of;

/** The run id and token a stream path names; null for any other shape. */
export const parseStreamRoutePath = streams.parse;
