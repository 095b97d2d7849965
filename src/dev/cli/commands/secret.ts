import { CliError, cliOptions, type Command, unknownChoiceError } from "../commandLine.ts";
import { type PlatformTarget, requestPlatformApi, resolvePushedTarget } from "../platformTarget.ts";
import { readSecretValue } from "../secret/readSecretValue.ts";

const ACTIONS = ["put", "list", "delete"] as const;

/** Calls the secrets routes; a project that is not there yet is one to push first. */
async function callSecrets<T>(target: PlatformTarget, method: string, pathname: string, body?: unknown): Promise<T> {
  const { status, ok, json } = await requestPlatformApi(target, method, pathname, body);
  if (ok) return json as T;
  const message = json.error?.message ?? `The platform API answered ${status}.`;
  if (status === 404 && message.startsWith("No project named"))
    throw new CliError(`${message} Push it first (\`platform push\`), then put its secrets and push again.`);
  throw new CliError(message);
}

/** What the CLI says instead when no platform is named: locally, `platform dev` reads `.dev.vars`. */
const LOCALLY = "Under `platform dev`, put the project's variables in <dir>/.dev.vars (NAME=value lines) instead.";

export const secretCommand: Command = {
  summary: "Set, list or delete a pushed project's secrets (read as env.NAME and ctx.env.NAME).",
  usage:
    "platform secret put NAME | platform secret list | platform secret delete NAME   [--dir D | --slug S] [--api URL] [--json]",
  help: `
put NAME      reads the value from standard input (typed without echo at a
              terminal, else piped: \`printf %s "$KEY" | platform secret put
              API_KEY\`; one trailing newline is dropped) and stores it for
              the project, sealed; it never prints it
list          the project's secret names and when each was last put; never
              a value
delete NAME   removes one

The project reads a secret as env.NAME in fetch and as ctx.env.NAME in a
workflow step. A change reaches the running project with its next
\`platform push\` (every push binds all of its secrets, so they survive later
pushes). Names are letters, digits and underscores (not first), at most 64;
names starting with PLATFORM_ and the platform's own binding names are
refused; a value holds at most 5 KiB; a project has at most 64 secrets.

The project is the one \`platform push\` deploys from --dir (default: the
current directory), or --slug S; the platform is --api URL, else
$PLATFORM_API_URL, else the last \`platform login\`. Locally, \`platform dev\`
reads <dir>/.dev.vars instead (wrangler's format: NAME=value lines; keep it
out of git).`,
  options: cliOptions({ strings: ["dir", "slug", "api"], booleans: ["json"] }),
  async run({ positionals, values }) {
    const [action, name, ...extra] = positionals;
    if (!(ACTIONS as readonly (string | undefined)[]).includes(action))
      throw unknownChoiceError("secret action", action, ACTIONS);
    if (extra.length) throw new CliError(`Unexpected arguments: ${extra.join(" ")}`, 2);
    if (action === "list" && name) throw new CliError("platform secret list takes no name.", 2);
    if (action !== "list" && !name) throw new CliError(`platform secret ${action} needs the secret's NAME.`, 2);
    const target = resolvePushedTarget(values, LOCALLY);
    const secrets = `/projects/${encodeURIComponent(target.slug)}/secrets`;
    const print = (answer: unknown, text: string): undefined =>
      void console.log(values.json ? JSON.stringify(answer, null, 2) : text);
    switch (action) {
      case "put": {
        const value = await readSecretValue(name!);
        const answer = await callSecrets<{ created: boolean }>(
          target,
          "PUT",
          `${secrets}/${encodeURIComponent(name!)}`,
          { value },
        );
        return print(
          answer,
          `${answer.created ? "Added" : "Replaced"} secret ${name} of "${target.slug}" on ${target.apiUrl}; it reaches the project with its next \`platform push\`.`,
        );
      }
      case "list": {
        const answer = await callSecrets<{ secrets: { name: string; updatedAt: number }[] }>(target, "GET", secrets);
        if (values.json) return print(answer, "");
        if (!answer.secrets.length) return print(answer, `Project "${target.slug}" has no secrets.`);
        const width = Math.max(...answer.secrets.map((secret) => secret.name.length));
        return print(
          answer,
          answer.secrets
            .map((secret) => `${secret.name.padEnd(width)}  set ${new Date(secret.updatedAt).toISOString()}`)
            .join("\n"),
        );
      }
      case "delete": {
        const answer = await callSecrets(target, "DELETE", `${secrets}/${encodeURIComponent(name!)}`);
        return print(
          answer,
          `Deleted secret ${name} of "${target.slug}"; the running project keeps it until its next \`platform push\`.`,
        );
      }
    }
    return undefined;
  },
};
