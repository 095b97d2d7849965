import { type Command, CliError, cliOptions } from "../commandLine.ts";
import { resolveProjectTarget } from "../platformTarget.ts";
import { fetchWebhookRows, formatWebhookList } from "../webhook/webhookList.ts";

export const webhookCommand: Command = {
  summary: "List a project's verified webhook endpoints and their last deliveries.",
  usage: "platform webhook list [--dir D | --slug S --api URL] [--json]",
  help: `
list    each endpoint webhook(name, { verify, secret, start | route }) registers:
        the URL to give the provider (POST /__platform/webhooks/<name> on the
        project's origin), its signing scheme, the name of the project secret
        holding its key, the workflow it starts (or "route decides"), and its
        last 5 deliveries from the project's recent log: time, the provider's
        delivery id, and whether it was verified (and the run it started, or
        answered again on a redelivery) or why it was refused

The project: with --api or --slug, the pushed one; else the \`platform dev\`
running for --dir (default: the current directory), else the one
\`platform push\` deploys from --dir to the platform of the last
\`platform login\` (or $PLATFORM_API_URL). --json prints the raw answer.`,
  options: cliOptions({ strings: ["dir", "slug", "api"], booleans: ["json"] }),
  async run({ positionals, values }) {
    if (positionals[0] !== "list" || positionals.length > 1) throw new CliError(`Usage: ${webhookCommand.usage}`, 2);
    const rows = await fetchWebhookRows(resolveProjectTarget(values));
    process.stdout.write(values.json ? `${JSON.stringify({ webhooks: rows }, null, 2)}\n` : formatWebhookList(rows));
    return 0;
  },
};
