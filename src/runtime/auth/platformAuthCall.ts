import { IDENTITY_HEADER, signRequestToken } from "../../core/requestToken.ts";
import type { AuthProject } from "./authSite.ts";

/**
 * One identity-signed `POST <path>` with a JSON body to the API worker
 * through the `PLATFORM_API` service binding (the project's worker secret
 * signs method, path and body). Throws when there is no binding or no answer;
 * the caller reads the status.
 */
export async function postToPlatform(
  project: Pick<AuthProject, "platformApi" | "secret" | "projectId">,
  path: string,
  payload: unknown,
): Promise<Response> {
  if (!project.platformApi) throw new Error("this project worker has no PLATFORM_API binding");
  const body = JSON.stringify(payload);
  return project.platformApi.fetch(`https://platform.internal${path}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      [IDENTITY_HEADER]: await signRequestToken(
        "identity",
        { method: "POST", pathAndQuery: path, body },
        { projectId: project.projectId, secret: project.secret },
      ),
    },
    body,
  });
}
