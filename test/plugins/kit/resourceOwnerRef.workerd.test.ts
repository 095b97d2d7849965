import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { claimResource } from "#src/workers/db/resourceClaims.ts";
import { makeResourceOwnerRef, resolveResourceOwnerRef } from "#src/plugins/kit/resourceOwnerRef.ts";
import { platformRejection, pluginEnv, twoProjects } from "#test/support/workerd/index.ts";

describe("ResourceOwnerRef", () => {
  it("resolves for the owning project only, and refuses forged or foreign refs", async () => {
    const { a, b } = await twoProjects();
    const penv = pluginEnv();
    await claimResource(env.DB, {
      pluginId: "chatserver",
      resourceType: "server",
      projectId: a.id,
      externalResourceId: "G1",
      displayName: "Guild",
    });
    const ref = await makeResourceOwnerRef(penv, {
      pluginId: "chatserver",
      resourceType: "server",
      externalResourceId: "G1",
    });
    expect(ref).not.toContain(String(a.id) + ".");
    expect((await resolveResourceOwnerRef(penv, ref, "chatserver", a)).external_resource_id).toBe("G1");
    expect((await platformRejection(resolveResourceOwnerRef(penv, ref, "chatserver", b))).code).toBe("forbidden");
    expect((await platformRejection(resolveResourceOwnerRef(penv, ref, "workspace", a))).code).toBe("invalid_input");
    expect(
      (
        await platformRejection(
          resolveResourceOwnerRef(penv, ref.slice(0, -2) + (ref.endsWith("AA") ? "BB" : "AA"), "chatserver", a),
        )
      ).code,
    ).toBe("invalid_input");
    expect((await platformRejection(resolveResourceOwnerRef(penv, 42, "chatserver", a))).code).toBe("invalid_input");
  });
});
