import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PLUGIN_IDS } from "#src/contracts/pluginRegistry.ts";
import { orList } from "#src/core/wordList.ts";
import { artifactPath, launchChromium, removeWorkDir } from "../support/e2e/index.ts";
import { PLATFORM_BIN, REPO, runCli, signedInConsoleUrl, startDev, type DevProcess } from "../support/e2e/index.ts";

// Ports of this file: 8899 (a project with a slash command and a workspace message handler), 8922 (a copy of the demo).

const work = mkdtempSync(path.join(tmpdir(), "platform-plugins-"));
const dir = path.join(work, "bots");
let dev: DevProcess;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(path.join(dir, "src"), { recursive: true });
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "bots", private: true, type: "module" }));
  writeFileSync(
    path.join(dir, "src/index.ts"),
    `import { chatserver, workspace } from "platform";

chatserver.onCommand("hello", async (command) => {
  await chatserver.reply(command, "Hello, " + (command.user?.name ?? "someone") + "! You said " + JSON.stringify(command.args.text ?? ""));
}, { description: "Says hello" });

// Messages and reactions come over the chat server's Gateway, through the plugin's relay.
chatserver.onEvent("message", async (event) => {
  console.log("chatserver message: " + event.content);
});
chatserver.onEvent("reaction", async (event) => {
  console.log("chatserver reaction: " + event.emoji);
});

workspace.onEvent("message", async (event, context) => {
  if (!event.channel || !event.ts || !event.text) return;
  await workspace.threadReply(event.channel, event.threadTs ?? event.ts, "echo: " + event.text, { resource: context.resource });
});

export default { fetch: () => new Response("bots") };
`,
  );
  // Private: exempt from the 3 plugin actions per minute, which this file's bots project spends more of.
  dev = await startDev([dir, "--port", "8899", "--private"]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  removeWorkDir(work);
});

/** `platform plugin install …` as a child process whose output can be read while it runs. */
function startInstall(args: string[], projectDir = dir) {
  const child = spawn(process.execPath, [PLATFORM_BIN, "plugin", "install", ...args, "--dir", projectDir], {
    cwd: REPO,
    env: { ...process.env, NO_COLOR: "1" },
  });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return {
    output: () => output,
    async installUrl(): Promise<string> {
      const started = Date.now();
      for (;;) {
        const match = output.match(/^\s+(http:\/\/\S+\/install\?code=[0-9a-f]{64})$/m);
        if (match) return match[1]!;
        if (child.exitCode !== null || Date.now() - started > 20_000)
          throw new Error(`No install URL printed:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async exit(timeoutMS = 30_000): Promise<number | null> {
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMS);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

async function plugins() {
  const session = JSON.parse(readFileSync(path.join(dir, ".platform/dev.json"), "utf8")) as {
    apiUrl: string;
    cliToken: string;
    slug: string;
  };
  const response = await fetch(`${session.apiUrl}/projects/${session.slug}/plugins`, {
    headers: { authorization: `Bearer ${session.cliToken}` },
  });
  return (await response.json()) as {
    connections: { plugin: string; externalUserId: string }[];
    resources: { plugin: string; type: string; externalId: string; displayName: string }[];
  };
}

function fakeUrl(id: "chatserver" | "workspace"): string {
  const match = dev.output().match(new RegExp(`${id} plugin at \\S+ \\(fake provider at (http://\\S+)\\)`));
  if (!match) throw new Error(`No fake provider URL for ${id} in:\n${dev.output()}`);
  return match[1]!;
}

it("installs the workspace plugin through the fake provider's consent page, then a triggered message reaches the project's handler, which replies in the thread", async () => {
  const install = startInstall(["workspace", "--no-open"]);
  const url = await install.installUrl();
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForLoadState();
    await page.screenshot({ path: artifactPath("plugins-workspace-installed.png"), fullPage: true });
  } finally {
    await page.close();
  }
  expect(await install.exit()).toBe(0);
  expect(install.output()).toMatch(/^Connected workspace to workspace "Test Workspace" \(T0TEST\)$/m);
  const listed = await plugins();
  expect(listed.connections.map((c) => c.plugin)).toContain("workspace");
  expect(listed.resources).toContainEqual(
    expect.objectContaining({ plugin: "workspace", externalId: "T0TEST", displayName: "Test Workspace" }),
  );

  const triggered = await runCli(["plugin", "trigger", "workspace", "message", "--text", "hi", "--dir", dir]);
  expect(triggered.stderr).toBe("");
  expect(triggered.code).toBe(0);
  expect(triggered.stdout).toContain(`Sent a signed message "hi"`);
  expect(triggered.stdout).toMatch(/chat\.postMessage .*thread_ts=.*text="echo: hi" → ok/);
  const recorded = (await (await fetch(fakeUrl("workspace") + "/__fake/recorded")).json()) as {
    calls: { method: string; params: Record<string, unknown> }[];
  };
  console.log(install.output() + triggered.stdout);
  expect(recorded.calls).toContainEqual(
    expect.objectContaining({ method: "chat.postMessage", params: expect.objectContaining({ text: "echo: hi" }) }),
  );
}, 90_000);

it("installs the chat-server plugin on a server, registers the project's slash command there, and a triggered /hello gets the handler's reply", async () => {
  const install = startInstall(["chatserver", "--no-open"]);
  const url = await install.installUrl();
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.waitForLoadState();
  } finally {
    await page.close();
  }
  expect(await install.exit()).toBe(0);
  expect(install.output()).toMatch(/^Connected chatserver to server "Test Server" \(111111111111111111\)$/m);
  const listed = await plugins();
  expect(listed.resources).toContainEqual(
    expect.objectContaining({ plugin: "chatserver", externalId: "111111111111111111", displayName: "Test Server" }),
  );
  // platform dev re-sends the project's metadata to /deploy once the server is claimed: /hello gets registered there.
  const registered = async () => {
    const state = (await (await fetch(fakeUrl("chatserver") + "/__fake/state")).json()) as {
      commands: Record<string, { name: string }[]>;
    };
    return Object.values(state.commands)
      .flat()
      .map((c) => c.name);
  };
  await expect.poll(registered, { timeout: 5_000, interval: 250 }).toContain("hello");

  const triggered = await runCli([
    "plugin",
    "trigger",
    "chatserver",
    "command",
    "--name",
    "hello",
    "--text",
    "hi",
    "--dir",
    dir,
  ]);
  expect(triggered.stderr).toBe("");
  expect(triggered.code).toBe(0);
  expect(triggered.stdout).toContain("Sent a signed command /hello");
  expect(triggered.stdout).toContain(`Hello, `);
  expect(triggered.stdout).toContain(`You said \\"hi\\"`);

  // A message and a reaction: the fake publishes them on its Gateway; the relay delivers them to onEvent.
  const message = await runCli(["plugin", "trigger", "chatserver", "message", "--text", "hi there", "--dir", dir]);
  expect(message.stderr).toBe("");
  expect(message.stdout).toContain(
    `Sent a message "hi there" from server "Test Server" over the chat server's Gateway; the plugin's relay is connected.`,
  );
  expect(message.stdout).toContain("The project's handler ran.");
  await dev.waitFor(/chatserver message: hi there/, 10_000);
  const reaction = await runCli(["plugin", "trigger", "chatserver", "reaction", "--text", "🎉", "--dir", dir]);
  expect(reaction.stdout).toContain("over the chat server's Gateway");
  expect(reaction.stdout).toContain("The project's handler ran.");
  await dev.waitFor(/chatserver reaction: 🎉/, 10_000);
  console.log(install.output() + triggered.stdout + message.stdout + reaction.stdout);
}, 90_000);

it("the console shows both connections and their claimed resources (never a token), and its test-event form sends /hello like platform plugin trigger", async () => {
  const link = signedInConsoleUrl(dir);
  const page = await browser.newPage();
  try {
    await page.goto(link);
    await page.getByRole("heading", { name: "Plugin connections" }).waitFor();
    const table = async (caption: string) =>
      page
        .locator("table", { has: page.locator("caption", { hasText: caption }) })
        .locator("tbody tr")
        .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll("td")].map((td) => td.textContent)));
    const connections = await table("Plugin connections");
    expect(connections.map((row) => [row[0], row[4]])).toEqual([
      ["chatserver", "active"],
      ["workspace", "active"],
    ]);
    const resources = await table("Claimed resources");
    expect(resources.map((row) => [row[0], row[2], row[3]])).toEqual(
      expect.arrayContaining([
        ["workspace", "Test Workspace", "T0TEST"],
        ["chatserver", "Test Server", "111111111111111111"],
      ]),
    );
    expect(resources.find((row) => row[0] === "chatserver")?.[5]).toBe("/hello");
    // Tokens stay in the plugin workers: nothing token-shaped reaches the page.
    expect(await page.locator("main").textContent()).not.toMatch(
      /xox[bpe]-|accessToken|refreshToken|access_token|refresh_token/,
    );

    const form = page.locator("#test-event");
    await form.getByLabel("Plugin").selectOption("chatserver");
    await form.getByLabel("Event").selectOption("command");
    await form.getByLabel("Command name (chatserver command)").fill("hello");
    await form.getByLabel("Text").fill("from the console");
    await form.getByRole("button", { name: "Send" }).click();
    const output = page.locator("#test-event + .result");
    await expect.poll(() => output.textContent(), { timeout: 15_000 }).toMatch(/provider calls?[: ]|no provider calls/);
    const text = (await output.textContent())!;
    expect(text).toContain('Sent a signed command /hello "from the console" from server "Test Server"');
    expect(text).toContain('You said \\"from the console\\"');
    await page.screenshot({ path: artifactPath("console-plugins.png"), fullPage: true });
  } finally {
    await page.close();
  }
}, 60_000);

it("platform plugin status shows needs_reconnect with Slack's error after the fake revokes the token, active after a reinstall; uninstall releases the workspace", async () => {
  const status = async () => {
    const run = await runCli(["plugin", "status", "--dir", dir]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    return run.stdout;
  };
  const before = await status();
  expect(before).toMatch(/^workspace: active/m);
  expect(before).toMatch(/^chatserver: active/m);
  expect(before).toContain('server "Test Server" (111111111111111111)');
  expect(before).toContain("commands: /hello");
  expect(before).not.toMatch(/xox[bpe]-/);

  await fetch(fakeUrl("workspace") + "/__fake/revoke", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ teamId: "T0TEST" }),
  });
  const refused = await runCli(["plugin", "trigger", "workspace", "message", "--text", "after revoke", "--dir", dir]);
  expect(refused.stdout).toContain("revoked");
  const needs = await status();
  expect(needs).toMatch(/^workspace: needs_reconnect — the provider refused the token \(token_revoked\)/m);

  const install = startInstall(["workspace", "--no-open"]);
  const page = await browser.newPage();
  try {
    await page.goto(await install.installUrl());
    await page.getByRole("button", { name: "Allow" }).click();
    await page.waitForLoadState();
  } finally {
    await page.close();
  }
  expect(await install.exit()).toBe(0);
  expect(await status()).toMatch(/^workspace: active/m);

  const uninstalled = await runCli(["plugin", "uninstall", "workspace", "--dir", dir]);
  console.log(needs + uninstalled.stdout);
  expect(uninstalled.stderr).toBe("");
  expect(uninstalled.code).toBe(0);
  expect(uninstalled.stdout).toContain('Uninstalled workspace from project "');
  expect(uninstalled.stdout).toContain("Revoked the bot token at Slack.");
  expect(uninstalled.stdout).toContain('Released workspace "Test Workspace" (T0TEST)');
  const after = await status();
  expect(after).not.toMatch(/^workspace:/m);
  expect(after).toMatch(/^chatserver: active/m);
}, 90_000);

it("an install cancelled at the consent page ends with a clear failure line and exit 1", async () => {
  const install = startInstall(["workspace", "--timeout", "6", "--no-open"]);
  const url = await install.installUrl();
  const page = await browser.newPage();
  try {
    await page.goto(url);
    await page.getByRole("button", { name: "Cancel" }).click();
    await page.waitForLoadState();
    expect(await page.content()).toContain("cancelled");
  } finally {
    await page.close();
  }
  expect(await install.exit()).toBe(1);
  expect(install.output()).toMatch(/platform: Install not completed within 6s: nothing was connected/);
}, 60_000);

it("email-send needs no install; an unknown plugin or event is refused with usage exit 2", async () => {
  const email = await runCli(["plugin", "install", "email-send", "--dir", dir]);
  expect(email.code).toBe(0);
  expect(email.stdout).toContain("email-send needs no install");
  const unknown = await runCli(["plugin", "install", "nope", "--dir", dir]);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain(`needs a plugin: ${orList(PLUGIN_IDS)} (got "nope").`);
  expect(unknown.stderr).toContain("chatserver, workspace");
  const mention = await runCli(["plugin", "trigger", "chatserver", "mention", "--dir", dir]);
  expect(mention.code).toBe(2);
  expect(mention.stderr).toContain(
    `platform plugin trigger chatserver takes an event: command, message, reaction, component, modal (got "mention").`,
  );
}, 30_000);

it("the demo: its email form sends through the email-send plugin to the local fake provider and shows the provider's id; its /hello answers once the chat server is installed", async () => {
  const demoDir = path.join(work, "demo");
  cpSync(path.join(REPO, "demo/src"), path.join(demoDir, "src"), { recursive: true });
  cpSync(path.join(REPO, "demo/package.json"), path.join(demoDir, "package.json"));
  // --public: the demo gets a deployed public project's proxy rate, which the end of this test reaches.
  const demo = await startDev([demoDir, "--port", "8922", "--public"]);
  const page = await browser.newPage();
  try {
    await page.goto(demo.url + "/");
    await page.getByLabel("To").fill("ada@example.com");
    await page.getByRole("button", { name: "Send email" }).click();
    await expect
      .poll(() => page.locator("#email-result").textContent(), { timeout: 10_000 })
      .toMatch(/^Sent: provider id \S+/);
    await page.screenshot({ path: artifactPath("plugins-demo-email.png"), fullPage: true });
    const fake = demo.output().match(/email plugin at \S+ \(fake provider at (http:\/\/\S+)\)/)![1]!;
    const id = (await page.locator("#email-result").textContent())!.replace("Sent: provider id ", "");
    const { sent } = (await (await fetch(fake + "/__fake/sent")).json()) as {
      sent: { id: string; from: string; to: string[]; subject: string }[];
    };
    expect(sent).toContainEqual(
      expect.objectContaining({
        id,
        from: "demo@mail.platform.local",
        to: ["ada@example.com"],
        subject: "Hello from the platform demo",
      }),
    );
    expect(demo.output()).not.toContain("Plugins:");

    // The local outbox: what the project sent, through the CLI.
    const list = await runCli(["email", "list", "--dir", demoDir]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^\\S+Z  ${id}  ada@example\\.com  Hello from the platform demo$`, "m"));
    const shown = await runCli(["email", "show", id, "--dir", demoDir]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(
      "From:    demo@mail.platform.local\nTo:      ada@example.com\nSubject: Hello from the platform demo\n",
    );
    expect(shown.stdout).not.toContain("<");

    // The console's Outbox renders an email's html in a sandboxed frame, where its script does not run.
    const { plugins } = JSON.parse(readFileSync(path.join(demoDir, ".platform/credentials.json"), "utf8")) as {
      plugins: { email: { apiKey: string } };
    };
    const hostile = await fetch(fake + "/emails", {
      method: "POST",
      headers: { authorization: `Bearer ${plugins.email.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({
        from: "demo@mail.platform.local",
        to: "ada@example.com",
        subject: "Script inside",
        html: '<p id="text">Visible text</p><script>const m = ["SCRIPT", "EXECUTED"].join("-"); document.body.append(m); parent.document.title = m;</script>',
      }),
    });
    expect(hostile.status).toBe(200);
    await page.goto(signedInConsoleUrl(demoDir));
    const outbox = page.locator("#outbox");
    await outbox
      .getByRole("row", { name: /Script inside/ })
      .getByRole("button", { name: "View" })
      .click();
    const frame = outbox.locator("iframe.email-frame");
    await frame.waitFor();
    expect(await frame.getAttribute("sandbox")).toBe("");
    await expect
      .poll(() => page.frameLocator("#outbox iframe.email-frame").locator("#text").textContent())
      .toBe("Visible text");
    expect(await page.frameLocator("#outbox iframe.email-frame").locator("body").textContent()).not.toContain(
      "SCRIPT-EXECUTED",
    );
    expect(await page.title()).not.toContain("SCRIPT-EXECUTED");
    await page.screenshot({ path: artifactPath("console-outbox.png"), fullPage: true });

    const early = await runCli(["plugin", "trigger", "chatserver", "command", "--name", "hello", "--dir", demoDir]);
    expect(early.code).toBe(1);
    expect(early.stderr).toContain(`has no chatserver install yet: run \`platform plugin install chatserver\` first.`);
    const install = startInstall(["chatserver", "--no-open"], demoDir);
    await page.goto(await install.installUrl());
    await page.getByRole("button", { name: "Authorize" }).click();
    await page.waitForLoadState();
    expect(await install.exit()).toBe(0);
    const hello = await runCli(["plugin", "trigger", "chatserver", "command", "--name", "hello", "--dir", demoDir]);
    expect(hello.code).toBe(0);
    expect(hello.stdout).toContain(`content="Hello, Test User! This is the platform demo."`);
    expect(hello.stdout).toContain("The project's handler ran.");

    // What happened, when nothing did: no handler for the command, or the handler threw.
    const unknown = await runCli(["plugin", "trigger", "chatserver", "command", "--name", "nope", "--dir", demoDir]);
    expect(unknown.stdout).toContain("No handler is registered: This project has no handler for command /nope.");
    expect(unknown.stdout).not.toContain("no provider calls");
    // A public project makes 3 plugin actions a minute. Four replies at once pass that whatever the
    // machine's pace (the email may or may not still count): at least one is refused, and the handler's
    // throw is the command's exit code too.
    const replies = await Promise.all(
      Array.from({ length: 4 }, () =>
        runCli(["plugin", "trigger", "chatserver", "command", "--name", "hello", "--dir", demoDir]),
      ),
    );
    const limited = replies.filter((reply) => /The handler threw rate_limited: .+/.test(reply.stdout));
    expect(limited.length).toBeGreaterThanOrEqual(1);
    for (const reply of limited) {
      expect(reply.code).toBe(1);
      expect(reply.stdout).not.toContain("no provider calls");
    }
    expect(replies.filter((reply) => reply.code === 0).length).toBeLessThanOrEqual(3);
  } finally {
    await page.close();
    await demo.stop();
  }
}, 120_000);

it("the fake Gateway refusing the Message Content intent: within a minute, platform plugin status shows the chat-server connection degraded, naming the intent and the fix", async () => {
  // At the fake's "developer portal": no privileged intent enabled; then a non-resumable INVALID_SESSION makes
  // the relay IDENTIFY again, which the Gateway closes with 4014.
  const fake = fakeUrl("chatserver");
  const post = (path: string, body: unknown) =>
    fetch(fake + path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  expect((await post("/__fake/gateway/privileged-intents", { enabled: [] })).status).toBe(204);
  expect((await post("/__fake/gateway/invalid-session", { resumable: false })).status).toBe(204);
  let last = "";
  await expect
    .poll(
      async () => {
        last = (await runCli(["plugin", "status", "--dir", dir])).stdout;
        return last;
      },
      { timeout: 60_000, interval: 1_000 },
    )
    .toMatch(/^chatserver: degraded since \S+ — .*close 4014.*Message Content intent/m);
  expect(last).toMatch(/^ {2}Fix: Enable the Message Content intent for the bot/m);
  expect(last).toContain('server "Test Server" (111111111111111111)');
  const gateway = (await (await fetch(fake + "/__fake/gateway")).json()) as {
    events: { kind: string; code?: number }[];
  };
  expect(gateway.events.filter((e) => e.kind === "closed" && e.code === 4014)).toHaveLength(1);
  console.log(last);
}, 90_000);
