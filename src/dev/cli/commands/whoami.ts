import { CliError, type Command } from "../commandLine.ts";
import { callPlatformApi, resolvePlatformApi } from "../platformTarget.ts";

export const whoamiCommand: Command = {
  summary: "Print the email the CLI acts as on a platform.",
  usage: "platform whoami [--api URL]",
  help: `
Asks the platform API whose CLI token this is ($PLATFORM_TOKEN, else the one
\`platform login\` stored) and prints the email.

Options:
  --api URL   the platform API (default: $PLATFORM_API_URL, else the last login)`,
  options: { api: { type: "string" } },
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    const api = resolvePlatformApi(values.api as string | undefined);
    if (!api) throw new CliError("Not logged in to any platform: run `platform login --api URL`.");
    if (!api.token) throw new CliError(`Not logged in to ${api.apiUrl}: run \`platform login --api ${api.apiUrl}\`.`);
    const { email } = await callPlatformApi<{ email: string }>(
      { apiUrl: api.apiUrl, token: api.token, slug: "" },
      "GET",
      "/cli/whoami",
    );
    console.log(email);
  },
};
