import { CliError, type Command } from "../commandLine.ts";
import { forgetLogin } from "../credentials/credentialsFile.ts";
import { requestPlatformApi, resolvePlatformApi } from "../platformTarget.ts";

export const logoutCommand: Command = {
  summary: "Revoke the stored CLI token of a platform and forget it.",
  usage: "platform logout [--api URL]",
  help: `
Revokes the CLI token \`platform login\` stored for the API (the platform
deletes it) and removes it from the credentials file. A token the platform
no longer knows (401) is forgotten all the same. When the platform cannot be
reached or does not revoke the token, logout says so, exits 1 and keeps the
token, so it can be retried. $PLATFORM_TOKEN is not touched.

Options:
  --api URL   the platform API (default: $PLATFORM_API_URL, else the last login)`,
  options: { api: { type: "string" } },
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    // Only the stored login: a token from $PLATFORM_TOKEN is the environment's to manage.
    const api = resolvePlatformApi(values.api as string | undefined, { ...process.env, PLATFORM_TOKEN: undefined });
    if (!api?.token) {
      console.log(api ? `Not logged in to ${api.apiUrl}.` : "Not logged in to any platform.");
      return;
    }
    // Unreachable throws and keeps the token; already revoked (401) is forgotten all the same.
    const { status, ok, json } = await requestPlatformApi(
      { apiUrl: api.apiUrl, token: api.token, slug: "" },
      "POST",
      "/cli/logout",
    );
    if (!ok && status !== 401)
      throw new CliError(
        `${api.apiUrl} did not revoke the token (${status}${json.error?.message ? `: ${json.error.message}` : ""}); it is kept, run \`platform logout\` again.`,
      );
    forgetLogin(api.apiUrl);
    console.log(`Logged out of ${api.apiUrl}.`);
  },
};
