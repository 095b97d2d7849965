import { TRIGGER_PARAMETERS, type TriggerParameterName } from "../../../contracts/pluginDescriptor.ts";
import {
  commandKindOf,
  INSTALLABLE_PLUGINS,
  isInstallable,
  PLUGIN_IDS,
  PLUGINS,
  RESOURCE_TYPES,
  TRIGGERABLE_PLUGINS,
  triggerParametersOf,
  UNINSTALLABLE_PLUGINS,
  type Plugin,
  type PluginId,
  type TriggerablePlugin,
} from "../../../contracts/pluginRegistry.ts";
import { providerCallsHeading } from "../../../console/public/console/triggerReport.js";
import { stackLines } from "../../../console/public/console/logLines.js";
import { andList, orList } from "../../../core/wordList.ts";
import { CliError, repeatedOption, type Command } from "../commandLine.ts";
import { chooseBrowser, isOnPath, startBrowser } from "../console/chooseBrowser.ts";
import { callPlatformApi, resolvePlatformTarget, type PlatformTarget } from "../platformTarget.ts";

interface ConnectionSummary {
  plugin: string;
  externalUserId: string;
  connectedAt: string;
  tokenExpiresAt: string | null;
  status: "active" | "degraded" | "needs_reconnect" | "revoked";
  revoked: boolean;
  revokedAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  /** The plugin's own problem (the shared bot's), on every project's connection of it. */
  problem?: { cause: string; fix: string; since: string } | null;
}
interface ResourceSummary {
  plugin: string;
  type: string;
  externalId: string;
  displayName: string | null;
  claimedAt: string;
  commands?: string[];
}
/** What `DELETE /projects/:slug/plugins/:plugin` answers (src/plugins/kit/uninstallPlugin.ts). */
interface UninstallReport {
  plugin: string;
  atProvider: string[];
  connectionDeleted: boolean;
  released: ResourceSummary[];
}
interface PluginsAnswer {
  connections: ConnectionSummary[];
  resources: ResourceSummary[];
}

const ids = (plugins: readonly Plugin[]) => plugins.map(({ id }) => id);

/** The plugins each action takes, as its usage names them. */
const ACTION_PLUGINS = {
  install: PLUGIN_IDS,
  uninstall: ids(UNINSTALLABLE_PLUGINS),
  trigger: ids(TRIGGERABLE_PLUGINS),
} as const satisfies Record<string, readonly PluginId[]>;

function pluginArg(value: string | undefined, verb: keyof typeof ACTION_PLUGINS): Plugin {
  const plugin = PLUGINS.find(({ id }) => id === value);
  if (plugin) return plugin;
  throw new CliError(
    `platform plugin ${verb} needs a plugin: ${orList(ACTION_PLUGINS[verb])} (got ${JSON.stringify(value ?? "")}).`,
    2,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** What changes when an install completes: the plugin's connection and its claimed resources. */
function fingerprint(answer: PluginsAnswer, plugin: string): string {
  return JSON.stringify([
    answer.connections.filter((c) => c.plugin === plugin && !c.revoked).map((c) => [c.externalUserId, c.connectedAt]),
    answer.resources.filter((r) => r.plugin === plugin).map((r) => [r.externalId, r.claimedAt]),
  ]);
}

/**
 * Opens the install link in a browser (chooseBrowser.ts: `--no-open` and `BROWSER=none` say don't; `$BROWSER`, then
 * the system opener) when a display is available; answers the line saying which it did.
 */
export async function openInstallLink(
  url: string,
  input: { noOpen: boolean; env: NodeJS.ProcessEnv; platform: NodeJS.Platform; onPath: (command: string) => boolean },
  start: (choice: { command: string; args: string[] }, url: string) => Promise<Error | null> = startBrowser,
): Promise<string> {
  const choice = chooseBrowser({
    noOpen: input.noOpen,
    browserEnv: input.env.BROWSER,
    platform: input.platform,
    onPath: input.onPath,
  });
  if (choice.command === null) return `Not opening a browser (${choice.reason}): open the link yourself.`;
  const hasDisplay =
    input.platform === "darwin" ||
    input.platform === "win32" ||
    Boolean(input.env.BROWSER || input.env.DISPLAY || input.env.WAYLAND_DISPLAY);
  if (!hasDisplay) return "Not opening a browser (no display): open the link yourself.";
  const error = await start(choice, url);
  return error
    ? `Could not start ${choice.command} (${error.message}): open the link yourself.`
    : `Opened the link in your browser (${choice.command}).`;
}

/** A visible wait: dots on a terminal, a line every 10 s otherwise. */
function waitIndicator(deadline: number): { tick(): void; done(): void } {
  const tty = process.stdout.isTTY === true;
  const frames = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
  let n = 0;
  let lastLine = Date.now();
  if (!tty) console.log("Waiting for the install to complete…");
  return {
    tick() {
      const left = Math.max(0, Math.round((deadline - Date.now()) / 1000));
      if (tty)
        process.stdout.write(`\r${frames[n++ % frames.length]} Waiting for the install to complete (${left}s left)… `);
      else if (Date.now() - lastLine >= 10_000) {
        lastLine = Date.now();
        console.log(`Still waiting (${left}s left)…`);
      }
    },
    done() {
      if (tty) process.stdout.write("\r\x1b[K");
    },
  };
}

async function install(
  plugin: PluginId,
  target: PlatformTarget,
  values: Record<string, string | boolean | undefined>,
): Promise<number> {
  const before = await callPlatformApi<PluginsAnswer>(target, "GET", `/projects/${target.slug}/plugins`);
  const session = await callPlatformApi<{ code: string; expiresAt: string; installUrl: string }>(
    target,
    "POST",
    "/oauth/session",
    {
      project: target.slug,
      plugin,
    },
  );
  console.log(`Open this link to install ${plugin} for project "${target.slug}" (valid for 2 minutes, one use):`);
  console.log(`  ${session.installUrl}`);
  console.log(
    await openInstallLink(session.installUrl, {
      noOpen: values["no-open"] === true,
      env: process.env,
      platform: process.platform,
      onPath: isOnPath,
    }),
  );
  const expiresAt = Date.parse(session.expiresAt);
  const timeoutSeconds = typeof values.timeout === "string" ? Number(values.timeout) : NaN;
  if (typeof values.timeout === "string" && !(timeoutSeconds > 0))
    throw new CliError("--timeout must be a positive number of seconds.", 2);
  // The code is consumed at /install; the consent and callback may run a little past its expiry, so allow a grace period.
  const deadline = timeoutSeconds > 0 ? Date.now() + timeoutSeconds * 1000 : expiresAt + 15_000;
  const start = fingerprint(before, plugin);
  const indicator = waitIndicator(deadline);
  try {
    while (Date.now() < deadline) {
      await sleep(1000);
      indicator.tick();
      let now: PluginsAnswer;
      try {
        now = await callPlatformApi<PluginsAnswer>(target, "GET", `/projects/${target.slug}/plugins`);
      } catch {
        continue; // a dropped poll is retried
      }
      if (fingerprint(now, plugin) === start) continue;
      const resource = now.resources
        .filter((r) => r.plugin === plugin)
        .sort((a, b) => Date.parse(b.claimedAt) - Date.parse(a.claimedAt))[0];
      if (!resource) continue; // connected, resource not claimed yet
      indicator.done();
      const kind = resource.type === "guild" ? "server" : resource.type;
      console.log(
        `Connected ${plugin} to ${kind} "${resource.displayName ?? resource.externalId}" (${resource.externalId})`,
      );
      return 0;
    }
  } finally {
    indicator.done();
  }
  if (timeoutSeconds > 0 && deadline < expiresAt) {
    throw new CliError(
      `Install not completed within ${timeoutSeconds}s: nothing was connected (the consent was refused or cancelled, or the link was not followed).`,
    );
  }
  throw new CliError(
    `Install not completed: the install code expired after 2 minutes and nothing was connected (the consent was refused or cancelled, or the link was not followed). Run \`platform plugin install ${plugin}\` again.`,
  );
}

/**
 * A fresh install link for each connection that needs reconnecting (`POST /oauth/session`): following it
 * installs again, which stores a new token pair and clears the error. A link that cannot be made is left out
 * (the status line names the command instead).
 */
async function reconnectLinks(target: PlatformTarget, answer: PluginsAnswer): Promise<Record<string, string>> {
  const links: Record<string, string> = {};
  for (const c of answer.connections.filter((x) => x.status === "needs_reconnect")) {
    try {
      const session = await callPlatformApi<{ installUrl: string }>(target, "POST", "/oauth/session", {
        project: target.slug,
        plugin: c.plugin,
      });
      links[c.plugin] = session.installUrl;
    } catch {
      // The status still says how to reinstall.
    }
  }
  return links;
}

async function uninstall(plugin: PluginId, target: PlatformTarget): Promise<void> {
  const report = await callPlatformApi<UninstallReport>(target, "DELETE", `/projects/${target.slug}/plugins/${plugin}`);
  console.log(`Uninstalled ${plugin} from project "${target.slug}":`);
  for (const line of report.atProvider) console.log(`  ${line}`);
  console.log(`  ${report.connectionDeleted ? "Deleted the connection." : "There was no connection to delete."}`);
  for (const r of report.released)
    console.log(
      `  Released ${r.type} "${r.displayName ?? r.externalId}" (${r.externalId}): another project may install there now.`,
    );
}

/**
 * `platform plugin status`: each plugin's connection (health, the provider's last error; for one that needs
 * reconnecting, the install link that fixes it when `installLinks` has one), resources and commands.
 */
export function describePluginStatus(
  slug: string,
  answer: PluginsAnswer,
  installLinks: Record<string, string> = {},
): string[] {
  const plugins = [...new Set([...answer.connections, ...answer.resources].map((x) => x.plugin))].sort();
  if (!plugins.length)
    return [
      `No plugin installed in project "${slug}". Install one with \`platform plugin install ${ids(INSTALLABLE_PLUGINS).join("|")}\`.`,
    ];
  const lines: string[] = [];
  for (const plugin of plugins) {
    const c = answer.connections.find((x) => x.plugin === plugin);
    if (!c) lines.push(`${plugin}: no connection`);
    else if (c.status === "revoked")
      lines.push(`${plugin}: revoked at ${c.revokedAt} (reinstall: platform plugin install ${plugin})`);
    else if (c.status === "needs_reconnect") {
      lines.push(
        `${plugin}: needs_reconnect — the provider refused the token (${c.lastError}) at ${c.lastErrorAt}; reinstall: platform plugin install ${plugin}`,
      );
      const link = installLinks[plugin];
      if (link) lines.push(`  Reconnect: open ${link} (one use, valid 2 minutes)`);
    } else if (c.status === "degraded" && c.problem)
      lines.push(`${plugin}: degraded since ${c.problem.since} — ${c.problem.cause}`, `  Fix: ${c.problem.fix}`);
    else
      lines.push(
        `${plugin}: active (connected ${c.connectedAt}${c.tokenExpiresAt ? `, token expires ${c.tokenExpiresAt}` : ""})`,
      );
    const resources = answer.resources.filter((r) => r.plugin === plugin);
    if (!resources.length) lines.push("  no resource claimed");
    for (const r of resources) {
      const commands = r.commands ? ` commands: ${r.commands.map((n) => `/${n}`).join(" ") || "none"}` : "";
      lines.push(`  ${r.type} "${r.displayName ?? r.externalId}" (${r.externalId}), claimed ${r.claimedAt}${commands}`);
    }
  }
  return lines;
}

/** One provider call a fake recorded: a Web API method with params (the workspace's), a REST request (the chat server's), or as it came. */
export function describeCall(call: unknown): string {
  const c = call as Record<string, unknown> | null;
  if (typeof c?.method === "string" && typeof c.params === "object" && typeof c.ok === "boolean") {
    const { channel, text, thread_ts, name, timestamp } = (c.params ?? {}) as Record<string, unknown>;
    const fields = Object.entries({ channel, thread_ts, text, name, timestamp })
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${c.method} ${fields.join(" ")} → ${c.ok ? "ok" : `error ${c.error ?? ""}`}`;
  }
  if (typeof c?.method === "string" && typeof c.path === "string" && typeof c.status === "number") {
    const body = c.body as { content?: unknown; data?: { content?: unknown } } | null;
    const content = body?.content ?? body?.data?.content;
    return `${c.method} ${c.path}${content !== undefined ? ` content=${JSON.stringify(content)}` : ""} → ${c.status}`;
  }
  return JSON.stringify(call);
}

/** What `POST /projects/:slug/plugins/:plugin/test-events` answers (src/dev/routes/pluginTestEvents.ts). */
export interface TestEventAnswer {
  /** What was sent and what the project's delivery came to (no handler, the handler's error, or that it ran). */
  summary: string;
  pluginAnswer: { status: number | null; inlineReply?: unknown };
  outcome:
    | { result: "handled" | "no_handler" }
    | { result: "failed"; error: { code: string; message: string; stack?: string } }
    | null;
  calls: unknown[];
}

const PARAMETER_NAMES = Object.keys(TRIGGER_PARAMETERS) as TriggerParameterName[];

/** A kind's parameters from their flags (`--custom-id`, `--values a,b`, `--field k=v` …), as the route takes them. */
export function triggerParameters(
  plugin: TriggerablePlugin,
  kind: string,
  values: Record<string, string | boolean | undefined>,
): Record<string, unknown> {
  const uses = triggerParametersOf(plugin, kind);
  const out: Record<string, unknown> = {};
  for (const name of PARAMETER_NAMES) {
    const { flag, type } = TRIGGER_PARAMETERS[name];
    const given = type === "fields" ? repeatedOption(values, flag) : values[flag];
    const present = Array.isArray(given) ? given.length > 0 : given !== undefined;
    const use = uses.find((u) => u.name === name);
    if (!present) {
      if (use?.required)
        throw new CliError(`A ${plugin.id} ${kind} needs --${flag} (${TRIGGER_PARAMETERS[name].about}).`, 2);
      continue;
    }
    if (!use) throw new CliError(`--${flag} does not apply to ${plugin.id} ${kind}.`, 2);
    if (type === "string") out[name] = given;
    else if (type === "list")
      out[name] = String(given)
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean);
    else
      out[name] = Object.fromEntries(
        (given as string[]).map((pair) => {
          const at = pair.indexOf("=");
          if (at < 1) throw new CliError(`--${flag} takes id=value (got ${JSON.stringify(pair)}).`, 2);
          return [pair.slice(0, at), pair.slice(at + 1)];
        }),
      );
  }
  return out;
}

async function trigger(
  plugin: TriggerablePlugin,
  kind: string,
  target: PlatformTarget,
  values: Record<string, string | boolean | undefined>,
) {
  if (values.api)
    throw new CliError(
      "platform plugin trigger drives the local fake providers: it works with `platform dev` only (leave out --api).",
      2,
    );
  const text = typeof values.text === "string" ? values.text : undefined;
  const name = typeof values.name === "string" ? values.name : undefined;
  const isCommand = kind === commandKindOf(plugin);
  if (isCommand && !name) throw new CliError(`A ${plugin.id} ${kind} needs --name <command>.`, 2);
  const parameters = triggerParameters(plugin, kind, values);
  // The API worker has the fake provider send the signed webhook and waits (up to ~5 s) for what the handler did through the proxy.
  const answer = await callPlatformApi<TestEventAnswer>(
    target,
    "POST",
    `/projects/${target.slug}/plugins/${plugin.id}/test-events`,
    {
      kind,
      ...(isCommand ? { name } : {}),
      ...(text !== undefined ? { text } : {}),
      ...(typeof values.channel === "string" ? { channel: values.channel } : {}),
      ...(typeof values.message === "string" ? { message: values.message } : {}),
      ...parameters,
    },
  );
  for (const line of triggerReport(answer)) console.log(line);
  return answer;
}

/** `plugin trigger`'s exit code: 1 when the project's handler threw (a script can tell), 0 otherwise. */
export function triggerExitCode(answer: Pick<TestEventAnswer, "outcome">): number {
  return answer.outcome?.result === "failed" ? 1 : 0;
}

/**
 * What `plugin trigger` prints after the API's summary: the plugin's inline reply, then the provider
 * calls, attributed only to whom the outcome allows: the handler when it ran; the plugin itself when
 * no handler ran (its own "no handler" answer); neither when the handler threw or the outcome is unknown.
 */
export function triggerReport(answer: TestEventAnswer): string[] {
  const lines = [answer.summary];
  const inline = answer.pluginAnswer.inlineReply;
  if (inline !== undefined) lines.push(`  inline reply: ${JSON.stringify(inline)}`);
  if (answer.outcome?.result === "failed") lines.push(...stackLines(answer.outcome.error.stack));
  const heading = providerCallsHeading(answer.outcome?.result, answer.calls.length, inline !== undefined);
  if (heading) lines.push(heading);
  for (const call of answer.calls) lines.push(`  ${describeCall(call)}`);
  return lines;
}

const choices = (words: readonly string[]) => `<${words.join("|")}>`;
const TRIGGER_KINDS = [...new Set(TRIGGERABLE_PLUGINS.flatMap((plugin) => plugin.triggers.kinds))];
const WITHOUT_INSTALL = ids(PLUGINS.filter((plugin) => !isInstallable(plugin)));
/** How a kind is written with its flags: `command --name N [--text T]`, `component --custom-id X [--values V]`. */
function kindUsage(plugin: TriggerablePlugin, kind: string): string {
  if (kind === commandKindOf(plugin)) return `${kind} --name N [--text T]`;
  const flags = triggerParametersOf(plugin, kind).map(({ name, required }) => {
    const { flag, type } = TRIGGER_PARAMETERS[name];
    const arg = type === "fields" ? `${flag} K=V` : `${flag} ${type === "list" ? "A,B" : "X"}`;
    return required ? `--${arg}` : `[--${arg}]${type === "fields" ? "…" : ""}`;
  });
  return [kind, ...flags].join(" ");
}

/** Each plugin's events, one help line each: `chatserver: command --name N [--text T], message, reaction, …`. */
const TRIGGER_LINES = TRIGGERABLE_PLUGINS.map(
  (plugin) => `            ${plugin.id}: ${plugin.triggers.kinds.map((kind) => kindUsage(plugin, kind)).join(", ")}`,
).join("\n");

export const pluginCommand: Command = {
  summary: "Install, inspect or uninstall a plugin of a project, or fire a test event at it.",
  usage: [
    `platform plugin install ${choices(ACTION_PLUGINS.install)} [--no-open] [--timeout S]`,
    "platform plugin status",
    `platform plugin uninstall ${choices(ACTION_PLUGINS.uninstall)}`,
    `platform plugin trigger ${choices(ACTION_PLUGINS.trigger)} ${choices(TRIGGER_KINDS)} [--text T] [--name N] [--custom-id X] [--values A,B] [--field K=V]… [--action-id X] [--value V] [--callback-id X] [--channel C] [--message M]   [--dir d] [--api URL]`,
  ].join(" | "),
  help: `
install   creates a one-time install link (valid 2 minutes), prints it, and
          waits while you follow it and approve at the provider; ends with
          "Connected <plugin> to ${choices(RESOURCE_TYPES)} "<name>" (<id>)" (exit 0)
          or the reason it did not complete (exit 1). Opens the link in a
          browser when a display is available ($BROWSER, else open/xdg-open)
          and says whether it did; --no-open or BROWSER=none only print it.
          --timeout S gives up after S seconds instead of at the code's
          expiry.${WITHOUT_INSTALL.length ? ` ${andList(WITHOUT_INSTALL)} ${WITHOUT_INSTALL.length > 1 ? "need" : "needs"} no install.` : ""}
status    each plugin's connection (active, needs_reconnect with the
          provider's last error, or revoked), its claimed servers or
          workspace and the commands registered there; never a token.
uninstall revokes the token at the provider where it can, removes the
          bot's commands, deletes the connection and releases every claimed
          server or workspace (another project may then install there);
          prints what it did.
trigger   (\`platform dev\` only) asks the API (POST
          /projects/:slug/plugins/:plugin/test-events) to have the local fake
          provider send a correctly signed webhook to the local plugin worker,
          then prints the plugin's answer, what came of the delivery to the
          project ("No handler is registered: …", "The handler threw <code>:
          <message>", or "The project's handler ran.") and what the handler
          did through the plugin proxy (the provider calls the fake recorded,
          up to 5 s). A component, modal, action or view acts on what the
          bot posted or opened: the newest message showing that component
          (--channel C, --message M to pick one), the open modal or view with
          that id; what is not there is refused with the fake's reason. The
          events:
${TRIGGER_LINES}

Targets the \`platform dev\` running for --dir (default: the current
directory), or --api URL with $PLATFORM_TOKEN.`,
  options: {
    dir: { type: "string" },
    api: { type: "string" },
    "no-open": { type: "boolean" },
    timeout: { type: "string" },
    text: { type: "string" },
    name: { type: "string" },
    channel: { type: "string" },
    message: { type: "string" },
    ...Object.fromEntries(
      Object.values(TRIGGER_PARAMETERS).map(({ flag, type }) => [
        flag,
        type === "fields" ? { type: "string" as const, multiple: true } : { type: "string" as const },
      ]),
    ),
  },
  async run({ positionals, values }) {
    const [action, pluginName, kind, ...extra] = positionals;
    if (action === "install") {
      if (kind || extra.length) throw new CliError(`Unexpected arguments: ${[kind, ...extra].join(" ")}`, 2);
      const plugin = pluginArg(pluginName, "install");
      if (!isInstallable(plugin)) {
        console.log(`${plugin.id} needs no install: ${plugin.install.instead}.`);
        return 0;
      }
      return install(plugin.id, resolvePlatformTarget(values), values);
    }
    if (action === "status") {
      if (pluginName) throw new CliError(`Unexpected arguments: ${[pluginName, kind, ...extra].join(" ")}`, 2);
      const target = resolvePlatformTarget(values);
      const answer = await callPlatformApi<PluginsAnswer>(target, "GET", `/projects/${target.slug}/plugins`);
      for (const line of describePluginStatus(target.slug, answer, await reconnectLinks(target, answer)))
        console.log(line);
      return 0;
    }
    if (action === "uninstall") {
      if (kind || extra.length) throw new CliError(`Unexpected arguments: ${[kind, ...extra].join(" ")}`, 2);
      const plugin = pluginArg(pluginName, "uninstall");
      if (!isInstallable(plugin))
        throw new CliError(`${plugin.id} is not installed, so there is nothing to uninstall.`, 2);
      if (!plugin.install.uninstalls) throw new CliError(`${plugin.id} cannot be uninstalled.`, 2);
      await uninstall(plugin.id, resolvePlatformTarget(values));
      return 0;
    }
    if (action === "trigger") {
      if (extra.length) throw new CliError(`Unexpected arguments: ${extra.join(" ")}`, 2);
      const named = pluginArg(pluginName, "trigger");
      const plugin = TRIGGERABLE_PLUGINS.find(({ id }) => id === named.id);
      if (!plugin) throw new CliError(`${named.id} has no events to trigger.`, 2);
      const kinds: readonly string[] = plugin.triggers.kinds;
      if (!kind || !kinds.includes(kind)) {
        throw new CliError(
          `platform plugin trigger ${plugin.id} takes an event: ${kinds.join(", ")} (got ${JSON.stringify(kind ?? "")}).`,
          2,
        );
      }
      const answer = await trigger(plugin, kind, resolvePlatformTarget(values), values);
      return triggerExitCode(answer);
    }
    throw new CliError(`Unknown plugin action "${action ?? ""}": use install, status, uninstall or trigger.`, 2);
  },
};
