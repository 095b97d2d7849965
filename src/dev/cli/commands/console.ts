import { CliError, type Command } from "../commandLine.ts";
import { chooseBrowser, isOnPath, startBrowser } from "../console/chooseBrowser.ts";
import { consoleLinkFor } from "../console/consoleLink.ts";

/** `platform console`: a platform's console, signed in, without the token in the terminal. */
export const consoleCommand: Command = {
  summary: "Open the console of the running `platform dev` (or of --api URL), signed in.",
  usage: "platform console [--dir d | --api URL] [--no-open] [--print-token]",
  help: `
Opens the console of the \`platform dev\` running for --dir (default: the
current directory) in a browser, signed in as the local CLI user, and says
which browser command it used. With --api URL, the console of that platform
(\`platform up\` or deployed), signed in with the token \`platform login --api
URL\` stored (or $PLATFORM_TOKEN). The sign-in travels in the URL's fragment
(#token=…), which the browser never sends to a server; it is not printed.

Respects $BROWSER (BROWSER=none: do not open), else uses xdg-open (open on
macOS). When it does not open a browser (--no-open, BROWSER=none, none
found) it prints the plain console address.

Options:
  --dir d          the project folder (default: the current directory)
  --api URL        the platform's API instead (after \`platform login --api URL\`)
  --no-open        only print the console's address
  --print-token    print the signed-in link itself (it carries the CLI token:
                   anyone with it can act as you on that platform)`,
  options: {
    dir: { type: "string" },
    api: { type: "string" },
    "no-open": { type: "boolean" },
    "print-token": { type: "boolean" },
  },
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    const { url, signedIn } = consoleLinkFor(values as { api?: string; dir?: string });
    if (values["print-token"]) {
      console.log(signedIn);
      return;
    }
    const choice = chooseBrowser({
      noOpen: values["no-open"] === true,
      browserEnv: process.env.BROWSER,
      platform: process.platform,
      onPath: isOnPath,
    });
    if (choice.command === null) {
      console.log(`Console: ${url}`);
      console.log(
        `Not opened (${choice.reason}). To sign in there, open the link \`platform console --print-token\` prints.`,
      );
      return;
    }
    const failed = await startBrowser(choice, signedIn);
    if (failed) {
      console.log(`Console: ${url}`);
      console.log(
        `Could not start ${choice.command} (${failed.message}). To sign in, open the link \`platform console --print-token\` prints.`,
      );
      return 1;
    }
    console.log(`Opened ${url} signed in, with ${choice.command}.`);
  },
};
