/**
 * A path segment as routers leave it, percent-encoded, decoded once; null when it is not valid
 * percent-encoding (no name or id of ours has such a form, so callers answer as for one that does not exist).
 */
export function decodePathSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
