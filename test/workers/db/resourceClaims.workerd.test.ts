import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimResource, findResourceOwner, releaseResource } from "#src/workers/db/resourceClaims.ts";
import { platformRejection, twoProjects } from "#test/support/workerd/index.ts";

describe("claimResource", () => {
  it("gives a resource to one project: another project's claim is a conflict and changes nothing; the same project's re-claim succeeds", async () => {
    const { a, b } = await twoProjects();
    const claim = {
      pluginId: "workspace",
      resourceType: "workspace" as const,
      externalResourceId: "T1",
      displayName: "Team One",
    };
    await claimResource(env.DB, { ...claim, projectId: a.id });
    const error = await platformRejection(claimResource(env.DB, { ...claim, projectId: b.id, displayName: "Hijack" }));
    expect(error.code).toBe("conflict");
    expect(error.message).toMatch(/already connected to another project/);
    await claimResource(env.DB, { ...claim, projectId: a.id, displayName: "Team One renamed", metadata: { x: 1 } });

    const owner = await findResourceOwner(env.DB, "workspace", "workspace", "T1");
    expect(owner!.project.id).toBe(a.id);
    expect(owner!.resource.display_name).toBe("Team One renamed");
    expect(JSON.parse(owner!.resource.metadata)).toEqual({ x: 1 });
    expect(await findResourceOwner(env.DB, "workspace", "workspace", "T2")).toBeNull();

    expect(
      await releaseResource(env.DB, {
        pluginId: "workspace",
        resourceType: "workspace",
        externalResourceId: "T1",
        projectId: b.id,
      }),
    ).toBe(false);
    expect(
      await releaseResource(env.DB, {
        pluginId: "workspace",
        resourceType: "workspace",
        externalResourceId: "T1",
        projectId: a.id,
      }),
    ).toBe(true);
    await claimResource(env.DB, { ...claim, projectId: b.id });
  });
});
