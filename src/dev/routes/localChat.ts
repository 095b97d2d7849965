import { PlatformError } from "../../core/errors.ts";
import { requireOwnedProject } from "../../workers/api/projectRoutes.ts";
import type { CliRequest } from "../../workers/api/withCliUser.ts";
import type { ChatView } from "../fakes/chatView.ts";
import type { DevApiEnv } from "./devApiEnv.ts";
import { callFake, localInstall, testEventPlugin } from "./pluginTestEvents.ts";

/**
 * `GET /projects/:slug/plugins/:plugin/chat` (CLI token, project ownership;
 * `platform dev` only, like the test events): the channels of the project's
 * newest claimed server or workspace as the local fake provider keeps them,
 * the way a person in the chat sees them (messages with their buttons and
 * selects, ephemeral answers to the fake's user, open modals and views):
 *
 *   { plugin, resource: { externalId, displayName }, channels: [{ id, name, messages }], forms }
 *
 * (src/dev/fakes/chatView.ts). The console's chat window draws it, and a
 * click there is a test event (`POST …/test-events`). Another project's
 * server or workspace is never shown: only the calling project's claim is asked for.
 */
export async function showLocalChat(request: CliRequest, env: DevApiEnv): Promise<Response> {
  const { id: plugin } = testEventPlugin(request.params.plugin);
  const project = await requireOwnedProject(env.DB, request.user, request.params.slug!);
  const { fake, resource } = await localInstall(
    env,
    project,
    plugin,
    "The chat window shows the local fake providers: it works with `platform dev` only.",
  );
  const { status, body } = await callFake(
    fake,
    plugin,
    `/__fake/chat?resourceId=${encodeURIComponent(resource.external_resource_id)}`,
  );
  if (status !== 200)
    throw new PlatformError("upstream_error", `The fake ${plugin} provider did not show its channels (${status}).`);
  const view = body as ChatView;
  return Response.json(
    {
      plugin,
      resource: { externalId: resource.external_resource_id, displayName: resource.display_name || null },
      channels: view.channels,
      forms: view.forms,
    },
    { headers: { "Cache-Control": "no-store" } },
  );
}
