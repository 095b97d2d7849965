import os from "node:os";
import { CliError, type Command } from "../commandLine.ts";
import { chooseBrowser, isOnPath, startBrowser } from "../console/chooseBrowser.ts";
import { browserLogin, machineName } from "../credentials/browserLogin.ts";
import { credentialsPath, saveLogin } from "../credentials/credentialsFile.ts";
import { resolvePlatformApi } from "../platformTarget.ts";

export const loginCommand: Command = {
  summary: "Sign in to a platform in the browser and keep a CLI token for it.",
  usage: "platform login [--api URL] [--no-open]",
  help: `
Asks the platform API for a sign-in link (a single-use code, valid for 2
minutes; never the token), prints it and opens it in a browser, then waits
while you sign in with the platform's identity provider and allow the CLI.
The CLI token is then stored in $XDG_CONFIG_HOME/platform/credentials.json
(default ~/.config/platform/credentials.json, mode 0600, one entry per API
URL), and that API becomes the default of every command given no --api.

Against \`platform up\` the identity provider is the local one: its sign-in
form lists the test users and the password.

$PLATFORM_TOKEN, when set, wins over stored logins (for CI).

Options:
  --api URL   the platform API (default: $PLATFORM_API_URL, else the last login)
  --no-open   only print the link (also when $BROWSER=none or no browser is found)`,
  options: { api: { type: "string" }, "no-open": { type: "boolean" } },
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    const api = resolvePlatformApi(values.api as string | undefined);
    if (!api) throw new CliError("Which platform? Pass --api URL (e.g. https://api.example.app).", 2);
    const outcome = await browserLogin(api.apiUrl, machineName(os.hostname()), {
      fetch,
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      async show(login) {
        console.log(`Sign in to ${api.apiUrl} in your browser:`);
        console.log(`  ${login.loginUrl}`);
        console.log(`The page will show the code ${login.verification}.`);
        const choice = chooseBrowser({
          noOpen: values["no-open"] === true,
          browserEnv: process.env.BROWSER,
          platform: process.platform,
          onPath: isOnPath,
        });
        if (choice.command !== null) {
          const failed = await startBrowser(choice, login.loginUrl);
          if (failed) console.log(`Could not start ${choice.command} (${failed.message}): open the link yourself.`);
        }
        console.log("Waiting for you to sign in and allow the CLI (Ctrl-C to give up)…");
      },
    });
    if (!outcome.ok) throw new CliError(`Login failed: ${outcome.message}`);
    saveLogin(api.apiUrl, { token: outcome.token, email: outcome.email });
    console.log(`Logged in to ${api.apiUrl} as ${outcome.email}`);
    console.log(`  (token saved in ${credentialsPath()})`);
  },
};
