import { describe, expect, it } from "vitest";
import { apiRouter } from "#src/workers/api/apiWorker.ts";
import { PLATFORM_ROOT_PATHS, RESERVED_SLUGS } from "#src/workers/api/reservedSlugs.ts";

/** The first path segment of each route the deployed API worker mounts (`/projects/:slug` → `projects`). */
const rootSegments = [...new Set(apiRouter().routes.map(([, , , path]) => path!.split("/")[1]!))].filter(Boolean);

describe("reserved slugs: every path the platform answers at its root", () => {
  it("reads the API worker's routes", () => {
    expect(rootSegments).toEqual(expect.arrayContaining(["health", "cli", "projects", "internal"]));
  });

  // Under `platform up` (and on any shared origin) `/<slug>/` beside the API: a project there would shadow a route.
  it.each(rootSegments)("reserves %s, the first segment of an API route", (segment) => {
    expect(PLATFORM_ROOT_PATHS.has(segment)).toBe(true);
    expect(RESERVED_SLUGS.has(segment)).toBe(true);
  });

  it("lists no root path the platform does not answer (the API's routes and the console's folder)", () => {
    expect([...PLATFORM_ROOT_PATHS].sort()).toEqual([...rootSegments, "console"].sort());
  });
});
