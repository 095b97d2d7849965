import { CliError, type Command } from "../commandLine.ts";
import { forgetLogin } from "../credentials/credentialsFile.ts";
import { callPlatformApi, resolvePlatformApi } from "../platformTarget.ts";

export const logoutCommand: Command = {
  summary: "Revoke the stored CLI token of a platform and forget it.",
  usage: "platform logout [--api URL]",
  help: `
Revokes the CLI token \`platform login\` stored for the API (the platform
deletes it) and removes it from the credentials file. A token the platform
no longer knows is forgotten all the same. $PLATFORM_TOKEN is not touched.

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
    try {
      await callPlatformApi({ apiUrl: api.apiUrl, token: api.token, slug: "" }, "POST", "/cli/logout");
    } catch (error) {
      // Already revoked (401): forget it all the same; unreachable: keep it, so logout can be retried.
      if (!(error instanceof CliError) || !/token/i.test(error.message)) throw error;
    }
    forgetLogin(api.apiUrl);
    console.log(`Logged out of ${api.apiUrl}.`);
  },
};
