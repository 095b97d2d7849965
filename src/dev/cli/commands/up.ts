import path from "node:path";
import { CliError, type Command, repeatedOption } from "../commandLine.ts";
import { formatRequestLine } from "../dev/output/devLogLines.ts";
import { holdStateDir } from "../dev/process/holdStateDir.ts";
import { LOCAL_IDP_PASSWORD, LOCAL_IDP_USERS } from "../dev/providers/localIdentityProvider.ts";
import { driveMinuteCron } from "../dev/crons/minuteCronDriver.ts";
import { untilSignalled } from "../dev/process/untilSignalled.ts";
import { FAKE_OPERATOR_HEADER } from "../../fakes/operatorGate.ts";
import { OPERATOR_TOKEN_FILE } from "../up/operatorToken.ts";
import { hostAndPort } from "../up/tenantOutbound.ts";
import { startUpPlatform } from "../up/upPlatform.ts";
import { defaultUpStateDir } from "../up/upStateDir.ts";

const HOST = "127.0.0.1";

export function parseUpArgs(
  values: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
): { port: number; stateDir: string; maxLiveRunsPerAccount?: number; allowOutbound?: string[] } {
  const raw = values.port;
  const port = raw === undefined ? 8800 : Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new CliError(`--port must be a port number, got "${raw}".`, 2);
  if (values.state === "") throw new CliError("--state needs a folder.", 2);
  const state = values.state as string | undefined;
  const stateDir = state === undefined ? defaultUpStateDir(env) : path.resolve(state);
  const allowOutbound = repeatedOption(values, "allow-outbound").map(parseAllowedOutbound);
  const allowed = allowOutbound.length ? { allowOutbound } : {};
  const cap = values["max-live-runs"];
  if (cap === undefined) return { port, stateDir, ...allowed };
  if (typeof cap !== "string" || !/^[1-9]\d{0,8}$/.test(cap))
    throw new CliError(`--max-live-runs must be a whole number from 1, got "${cap}".`, 2);
  return { port, stateDir, maxLiveRunsPerAccount: Number(cap), ...allowed };
}

/** `--allow-outbound HOST:PORT` as tenantOutbound.ts matches it: a host (an IPv6 one in brackets) and a port. */
function parseAllowedOutbound(value: string): string {
  let url: URL | null = null;
  try {
    url = new URL(`http://${value}`);
  } catch {
    // said below
  }
  const written = /:(\d+)$/.exec(value)?.[1];
  if (!url || !written || url.username || url.password || url.pathname !== "/" || url.search || url.hash)
    throw new CliError(`--allow-outbound takes HOST:PORT (e.g. 127.0.0.1:5432), got "${value}".`, 2);
  const port = Number(written);
  if (port < 1 || port > 65535) throw new CliError(`--allow-outbound's port must be 1–65535, got "${value}".`, 2);
  return hostAndPort(url);
}

export const upCommand: Command = {
  summary: "Run the platform alone on this machine, for `platform login` and `platform push`.",
  usage: "platform up [--port N] [--state DIR] [--max-live-runs N] [--allow-outbound HOST:PORT]… [--quiet]",
  help: `
Runs the platform with no project, as it runs deployed: the gateway, the API
worker, the login worker with a local OpenID Connect provider, the plugin
workers and their fake providers (workerd through Miniflare). Prints
"Platform on http://127.0.0.1:N" when ready; then

  platform login --api http://127.0.0.1:N
  platform push <dir>

sign in (with the local provider's form) and deploy exactly as against a
deployed platform: the API worker uploads each pushed project to a local
stand-in of Cloudflare's Workers for Platforms script-upload API, which checks
the upload against Cloudflare's API contract and refuses what Cloudflare would
refuse, in Cloudflare's error shape; like Cloudflare, it starts each upload
first and refuses one that does not start (a syntax error, a top level that
throws, an unknown compatibility flag). An accepted project runs in a workerd
of its own, so a push or a broken project never stops the platform or
another project, and is served at http://<slug>.localhost:N/ (private ones
at http://localhost:N/<slug>/) when the push answers. http://127.0.0.1:N is
the API and the console only: the deployed API's routes, none of
\`platform dev\`'s. Every minute it fires the platform workers' cron triggers
(those of their wrangler configs), as Cloudflare does deployed: workflow
schedules, the recovery sweep, retention, plugin health.

State (D1, Durable Objects, uploaded scripts) stays in
$XDG_STATE_HOME/platform/up (default ~/.local/state/platform/up), or in
--state DIR, across restarts, never in the folder it was started from; a
kept script that no longer starts is skipped at start with a line saying why. One \`platform up\` per state folder. Stops
cleanly on Ctrl-C or SIGTERM; if killed outright, a watchdog stops workerd.

The local provider's users are ${LOCAL_IDP_USERS.map((u) => u.email + (u.emailVerified ? "" : " (email not verified)")).join(", ")};
the password is "${LOCAL_IDP_PASSWORD}".

Tenants share this machine, so their code is fenced off it: a project's own
fetch of this machine (by any of its addresses) or of a loopback, private or
other non-public address is refused (403 outbound_refused), but for the
HOST:PORT pairs --allow-outbound names;
the public port drops Miniflare's internal headers (MF-Route-Override…);
the fake providers demand their credentials, and their /__fake/* routes
(the email outbox among them) answer only the operator token printed at
start and kept in the state folder (operator-token, mode 0600).

Options:
  --port N      the platform's port (default 8800)
  --state DIR   where state is kept (default ~/.local/state/platform/up)
  --max-live-runs N  most runs one account may have live at once, all its
                projects together (default 10000, MAX_LIVE_RUNS_PER_ACCOUNT)
  --allow-outbound HOST:PORT  lets every project fetch HOST:PORT although it
                is this machine or private (a service you run for them);
                repeat it for more
  --quiet       no request lines`,
  options: {
    port: { type: "string", short: "p" },
    state: { type: "string" },
    "max-live-runs": { type: "string" },
    "allow-outbound": { type: "string", multiple: true },
    quiet: { type: "boolean", short: "q" },
  },
  async run({ positionals, values }) {
    if (positionals.length) throw new CliError(`Unexpected arguments: ${positionals.join(" ")}`, 2);
    const { port, stateDir, maxLiveRunsPerAccount, allowOutbound } = parseUpArgs(values);
    await holdStateDir({ stateDir, host: HOST, port, command: "platform up", folder: stateDir }, async () => {
      let ready = false;
      const platform = await startUpPlatform({
        stateDir,
        port,
        host: HOST,
        log: (line) => console.log(line),
        ...(maxLiveRunsPerAccount === undefined ? {} : { maxLiveRunsPerAccount }),
        ...(allowOutbound ? { allowOutbound } : {}),
        onRequest: (request) => {
          if (ready && !values.quiet) console.log(formatRequestLine(request));
        },
      }).catch((error: unknown) => {
        throw new CliError(error instanceof Error ? error.message : String(error));
      });
      console.log(`State in ${stateDir}`);
      console.log(`  login worker at ${platform.loginUrl}`);
      console.log(
        `  identity provider at ${platform.issuer} (users ${LOCAL_IDP_USERS.map((u) => u.email).join(", ")}; password "${LOCAL_IDP_PASSWORD}")`,
      );
      console.log(`  console at ${platform.url}/console/`);
      console.log(`  email projects sent, kept by the fake email provider, at ${platform.emailOutboxUrl}`);
      console.log(
        `  the fakes' /__fake/* routes (that outbox among them) answer only the operator: send ${FAKE_OPERATOR_HEADER}: ${platform.operatorToken} (kept in ${path.join(stateDir, OPERATOR_TOKEN_FILE)})`,
      );
      if (allowOutbound) console.log(`  projects may also fetch ${allowOutbound.join(", ")} (--allow-outbound)`);
      console.log(`Next: platform login --api ${platform.url}, then platform push <dir>`);
      console.log(`Platform on ${platform.url}`);
      ready = true;
      const cron = driveMinuteCron(
        (minute) => platform.runScheduled(minute),
        (error) => console.error("The minute cron failed:", error),
      );
      await untilSignalled(async () => {
        cron.stop();
        await platform.stop();
      });
    });
  },
};
