/**
 * `POST /deploy` (identity token): the project's chat-server metadata, either
 * `{ commands, events }` or the whole `{ plugins: { chatserver: { … } } }`.
 * Registers the commands on every server the project claimed with one bulk
 * overwrite each (`PUT /applications/{app}/guilds/{guild}/commands`, the shared
 * bot token): idempotent, and commands the project dropped disappear. The
 * registered set's hash is kept in the server's resource metadata, so a deploy
 * that changes nothing makes no call (the chat server allows 200 command
 * creates per server per day). A re-install clears it. Each registration is a
 * bot action within the bot's cap (botBudget.ts); a deploy refused part-way
 * resumes where it stopped (the servers done keep their hash). The commands
 * are kept as the project's deployed manifest, so a server installed later
 * gets them before its install page says "Connected" (install.ts).
 */
import { PlatformError } from "../../core/errors.ts";
import { COMMAND_NAME } from "../../contracts/chatServerEvents.ts";
import { hex } from "../../core/crypto/encoding.ts";
import { storeDeployedManifest } from "../../workers/db/deployedManifests.ts";
import type { ProjectRow } from "../../workers/db/projectsTable.ts";
import { listProjectResources, replaceResourceMetadata, type ResourceRow } from "../../workers/db/resourceClaims.ts";
import { readDeployMetadata } from "../kit/deployMetadata.ts";
import { takeRateLimit } from "../kit/rateLimit.ts";
import { callBot } from "./botBudget.ts";
import { chatServerNow, PLUGIN_ID, RESOURCE_TYPE, type ChatServerEnv } from "./env.ts";

export interface CommandSpec {
  name: string;
  description: string;
}

export function parseCommands(value: unknown): CommandSpec[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new PlatformError("invalid_input", "commands must be an array.");
  if (value.length > 100) throw new PlatformError("invalid_input", "A project may register at most 100 commands.");
  const seen = new Set<string>();
  return value.map((c, i) => {
    const spec = typeof c === "string" ? { name: c } : (c as { name?: unknown; description?: unknown } | null);
    const name = spec?.name;
    if (typeof name !== "string" || !COMMAND_NAME.test(name)) {
      throw new PlatformError(
        "invalid_input",
        `commands[${i}]: a command name is 1-32 lowercase letters, digits, - or _ (got ${JSON.stringify(name ?? null)}).`,
      );
    }
    if (seen.has(name)) throw new PlatformError("invalid_input", `commands[${i}]: ${name} is registered twice.`);
    seen.add(name);
    const description =
      typeof spec?.description === "string" && spec.description.trim()
        ? spec.description.trim().slice(0, 100)
        : `/${name}`;
    return { name, description };
  });
}

function parseMetadata(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

async function commandsHash(commands: unknown): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(JSON.stringify(commands)));
  return hex(digest);
}

export interface ServerRegistration {
  id: string;
  name: string;
  commands: string[];
  changed: boolean;
}

/**
 * One server's bulk overwrite with the project's commands, skipped when the
 * server's recorded hash says it already has them. The names are kept in the
 * server's metadata too (`platform plugin status` lists them).
 */
export async function registerServerCommands(
  env: ChatServerEnv,
  project: ProjectRow,
  server: ResourceRow,
  commands: CommandSpec[],
): Promise<ServerRegistration> {
  const desired = commands.map((c) => ({ name: c.name, description: c.description, type: 1 }));
  const hash = await commandsHash(desired);
  const names = commands.map((c) => c.name);
  const metadata = parseMetadata(server.metadata);
  const done = { id: server.external_resource_id, name: server.display_name, commands: names };
  if (metadata.commandsHash === hash) return { ...done, changed: false };
  await takeRateLimit(env, project, ["chatServerBot"], chatServerNow(env));
  await callBot(
    env,
    "PUT",
    `/applications/${env.CHATSERVER_APPLICATION_ID}/guilds/${server.external_resource_id}/commands`,
    desired,
  );
  await replaceResourceMetadata(env.DB, server.id, project.id, { ...metadata, commandsHash: hash, commands: names });
  return { ...done, changed: true };
}

export async function handleDeploy(request: Request, env: ChatServerEnv): Promise<Response> {
  const { project, metadata: input } = await readDeployMetadata(request, env, PLUGIN_ID);
  const commands = parseCommands(input.commands);
  // Kept first: a server installed from now on gets these commands at install (install.ts).
  await storeDeployedManifest(env.DB, { pluginId: PLUGIN_ID, projectId: project.id }, { commands });
  const servers = await listProjectResources(env.DB, project.id, PLUGIN_ID);
  const registered: ServerRegistration[] = [];
  for (const server of servers) {
    if (server.resource_type !== RESOURCE_TYPE) continue;
    registered.push(await registerServerCommands(env, project, server, commands));
  }
  return Response.json({ servers: registered });
}
