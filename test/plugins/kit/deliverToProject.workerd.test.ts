import { describe, expect, it } from "vitest";
import { INTERNAL_HEADER, verifyRequestToken } from "#src/core/requestToken.ts";
import { deliverToProject } from "#src/plugins/kit/deliverToProject.ts";
import { fakeDispatcher, pluginEnv, twoProjects } from "#test/support/workerd/index.ts";

describe("deliverToProject", () => {
  it("POSTs the payload to /__plugin/<pluginId> of the project's script with an internal token", async () => {
    const { a } = await twoProjects();
    const dispatcher = fakeDispatcher(() => Response.json({ handled: true }));
    const payload = {
      kind: "event" as const,
      event: { text: "hi" },
      resource: "ref" as never,
      project: { slug: a.slug },
    };
    const response = await deliverToProject(pluginEnv({ DISPATCHER: dispatcher.namespace }), a, "workspace", payload);
    expect(await response.json()).toEqual({ handled: true });
    const [call] = dispatcher.calls;
    expect(call!.scriptName).toBe(a.script_name);
    expect(call!.url.pathname).toBe("/__plugin/workspace");
    expect(JSON.parse(call!.body)).toEqual(payload);
    const check = await verifyRequestToken(
      "internal",
      call!.headers.get(INTERNAL_HEADER),
      { method: "POST", pathAndQuery: "/__plugin/workspace", body: call!.body },
      { lookupSecret: () => a.worker_secret },
    );
    expect(check.ok).toBe(true);
  });
});
