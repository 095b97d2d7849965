import { spawn } from "node:child_process";
import { CliError, type Command } from "../commandLine.ts";
import { callPlatformApi, resolvePlatformTarget, type PlatformTarget } from "../platformTarget.ts";

type InstallablePlugin = "chatserver" | "workspace";

interface ConnectionSummary {
  plugin: string;
  externalUserId: string;
  connectedAt: string;
  revoked: boolean;
}
interface ResourceSummary {
  plugin: string;
  type: string;
  externalId: string;
  displayName: string | null;
  claimedAt: string;
}
interface PluginsAnswer {
  connections: ConnectionSummary[];
  resources: ResourceSummary[];
}

const TRIGGER_KINDS: Record<InstallablePlugin, readonly string[]> = {
  chatserver: ["command", "message", "reaction"],
  workspace: ["message", "mention", "reaction"],
};

function pluginArg(value: string | undefined, verb: string): InstallablePlugin | "email-send" {
  if (value === "chatserver" || value === "workspace" || value === "email-send") return value;
  throw new CliError(
    `platform plugin ${verb} needs a plugin: chatserver, workspace${verb === "install" ? " or email-send" : ""} (got ${JSON.stringify(value ?? "")}).`,
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

/** Opens a URL in the desktop's browser when there is a desktop; false when it cannot. */
function tryOpenBrowser(url: string): boolean {
  const hasDisplay =
    process.platform === "darwin" ||
    process.platform === "win32" ||
    Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
  if (!hasDisplay) return false;
  const [cmd, args] =
    process.platform === "darwin"
      ? ["open", [url]]
      : process.platform === "win32"
        ? ["cmd", ["/c", "start", "", url]]
        : ["xdg-open", [url]];
  try {
    const child = spawn(cmd as string, args as string[], { stdio: "ignore", detached: true });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
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
  plugin: InstallablePlugin,
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
  if (values.open === true && !values["no-open"]) {
    if (!tryOpenBrowser(session.installUrl)) console.log("(No display to open a browser on: open the link yourself.)");
  }
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

function describeCall(plugin: InstallablePlugin, call: unknown): string {
  if (plugin === "workspace") {
    const c = call as { method: string; params: Record<string, unknown>; ok: boolean; error?: string };
    const { channel, text, thread_ts, name, timestamp } = c.params ?? {};
    const fields = Object.entries({ channel, thread_ts, text, name, timestamp })
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`);
    return `${c.method} ${fields.join(" ")} → ${c.ok ? "ok" : `error ${c.error ?? ""}`}`;
  }
  const c = call as { method: string; path: string; body: unknown; status: number };
  const body = c.body as { content?: unknown; data?: { content?: unknown } } | null;
  const content = body?.content ?? body?.data?.content;
  return `${c.method} ${c.path}${content !== undefined ? ` content=${JSON.stringify(content)}` : ""} → ${c.status}`;
}

/** What `POST /projects/:slug/plugins/:plugin/test-events` answers (src/dev/routes/pluginTestEvents.ts). */
interface TestEventAnswer {
  /** What was sent and what the project's dispatch came to (no handler, the handler's error, or that it ran). */
  summary: string;
  pluginAnswer: { status: number | null; inlineReply?: unknown };
  outcome: { result: "handled" | "no_handler" | "failed" } | null;
  calls: unknown[];
}

async function trigger(
  plugin: InstallablePlugin,
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
  if (plugin === "chatserver" && kind === "command" && !name)
    throw new CliError("A chatserver command needs --name <command>.", 2);
  // The API worker has the fake provider send the signed webhook and waits (up to ~5 s) for what the handler did through the proxy.
  const answer = await callPlatformApi<TestEventAnswer>(
    target,
    "POST",
    `/projects/${target.slug}/plugins/${plugin}/test-events`,
    {
      kind,
      ...(plugin === "chatserver" && kind === "command" ? { name } : {}),
      ...(text !== undefined ? { text } : {}),
    },
  );
  console.log(answer.summary);
  const inline = answer.pluginAnswer.inlineReply;
  if (inline !== undefined) console.log(`  inline reply: ${JSON.stringify(inline)}`);
  // No handler, or it threw: the summary said so, and whatever it called before throwing is listed.
  if (!answer.calls.length) {
    if (answer.outcome?.result === "no_handler" || answer.outcome?.result === "failed") return;
    console.log(
      inline !== undefined
        ? "The handler made no further provider calls."
        : answer.outcome
          ? "The handler made no provider calls."
          : "The handler made no provider calls (within 5 s).",
    );
    return;
  }
  console.log(`The project's handler made ${answer.calls.length} provider call(s):`);
  for (const call of answer.calls) console.log(`  ${describeCall(plugin, call)}`);
}

export const pluginCommand: Command = {
  summary: "Install a plugin for a project, or fire a test event at it.",
  usage:
    "platform plugin install <chatserver|workspace|email-send> [--open] [--timeout S] | platform plugin trigger <chatserver|workspace> <command|message|reaction|mention> [--text T] [--name N]   [--dir d] [--api URL]",
  help: `
install   creates a one-time install link (valid 2 minutes), prints it, and
          waits while you follow it and approve at the provider; ends with
          "Connected <plugin> to <server|workspace> "<name>" (<id>)" (exit 0)
          or the reason it did not complete (exit 1). --open also tries to
          open the link in a browser (only when there is a display);
          --no-open (the default) just prints it. --timeout S gives up after
          S seconds instead of at the code's expiry. email-send needs no install.
trigger   (\`platform dev\` only) asks the API (POST
          /projects/:slug/plugins/:plugin/test-events) to have the local fake
          provider send a correctly signed webhook to the local plugin worker
          (chatserver: command --name N [--text T], message, reaction;
          workspace: message, mention, reaction), then prints the plugin's
          answer, what came of the dispatch to the project ("No handler is
          registered: …", "The handler threw <code>: <message>", or "The
          project's handler ran.") and what the handler did through the
          plugin proxy (the provider calls the fake recorded, up to 5 s).

Targets the \`platform dev\` running for --dir (default: the current
directory), or --api URL with $PLATFORM_TOKEN.`,
  options: {
    dir: { type: "string" },
    api: { type: "string" },
    open: { type: "boolean" },
    "no-open": { type: "boolean" },
    timeout: { type: "string" },
    text: { type: "string" },
    name: { type: "string" },
  },
  async run({ positionals, values }) {
    const [action, pluginName, kind, ...extra] = positionals;
    if (action === "install") {
      if (kind || extra.length) throw new CliError(`Unexpected arguments: ${[kind, ...extra].join(" ")}`, 2);
      const plugin = pluginArg(pluginName, "install");
      if (plugin === "email-send") {
        console.log(
          "email-send needs no install: call email.send() from your project (sent from <slug>@<the platform's sender domain>).",
        );
        return 0;
      }
      return install(plugin, resolvePlatformTarget(values), values);
    }
    if (action === "trigger") {
      if (extra.length) throw new CliError(`Unexpected arguments: ${extra.join(" ")}`, 2);
      const plugin = pluginArg(pluginName, "trigger");
      if (plugin === "email-send") throw new CliError("email-send has no events to trigger.", 2);
      if (!kind || !TRIGGER_KINDS[plugin].includes(kind)) {
        throw new CliError(
          `platform plugin trigger ${plugin} takes an event: ${TRIGGER_KINDS[plugin].join(", ")} (got ${JSON.stringify(kind ?? "")}).`,
          2,
        );
      }
      await trigger(plugin, kind, resolvePlatformTarget(values), values);
      return 0;
    }
    throw new CliError(`Unknown plugin action "${action ?? ""}": use install or trigger.`, 2);
  },
};
