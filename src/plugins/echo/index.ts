import { createPlatformRouter } from "../../core/web/router.ts";
import { parseJsonObject } from "../../core/web/jsonBody.ts";
import { authenticateProjectCall } from "../shared/authenticateProjectCall.ts";
import { pluginErrorResponse } from "../shared/pluginErrorResponse.ts";
import { takeRateLimit } from "../shared/rateLimit.ts";
import type { PluginEnv } from "../shared/pluginEnv.ts";

/** A throwaway plugin: `POST /echo` (identity token, `actions` rate limit) answers `{ project, echo: body }`. */
const router = createPlatformRouter<PluginEnv>("plugin echo", { errorResponse: pluginErrorResponse }).post(
  "/echo",
  async (request, env) => {
    const { project, body } = await authenticateProjectCall(request, env.DB);
    const echo = parseJsonObject(body);
    await takeRateLimit(env, project, ["actions"]);
    return Response.json({ project: project.slug, echo });
  },
);

export default { fetch: router.fetch } satisfies ExportedHandler<PluginEnv>;
