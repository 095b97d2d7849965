/**
 * Headers the platform's workers set for one another. Header names are case-insensitive on the
 * wire; one spelling here keeps greps and docs honest.
 */

/** The Gateway's `/<slug>` prefix for a project served under a path, which the entry strips before user code. */
export const BASE_PATH_HEADER = "X-Platform-Base-Path";
