import type { RoutedRequest } from "../../core/web/router.ts";
import { authenticateCliUser, type CliUser } from "./cliTokens.ts";
import type { ApiEnv } from "./env.ts";

/** A request `withCliUser` let through: it carries the CLI user behind its bearer token. */
export type CliRequest = RoutedRequest & { user: CliUser };

/** Route stage: authenticates the CLI token once (401 `unauthorized` otherwise) and puts its user on the request. */
export async function withCliUser(request: RoutedRequest, env: Pick<ApiEnv, "DB">): Promise<void> {
  request.user = await authenticateCliUser(request, env.DB);
}
