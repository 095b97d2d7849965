/**
 * The fake chat server's application commands: one guild's or the global ones
 * (`/applications/{app}[/guilds/{guild}]/commands[/{id}]`), checked by the provider's own rules.
 */
import { discordError, invalidForm, jsonBody, snowflake } from "./fakeMessages.ts";

export interface StoredCommand {
  id: string;
  name: string;
  [field: string]: unknown;
}

// The provider's own rule for command names (wider than the platform's contracts/chatServerEvents.ts COMMAND_NAME).
const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

export function createApplicationCommands(applicationId: string) {
  /** Commands by scope: a guild id, or "global". */
  let commands = new Map<string, StoredCommand[]>();

  function validateCommand(command: unknown, at: string): string | null {
    if (!command || typeof command !== "object") return `${at}: must be an object`;
    const cmd = command as { name?: unknown; description?: unknown; type?: unknown };
    const type = cmd.type ?? 1;
    if (
      typeof cmd.name !== "string" ||
      !COMMAND_NAME.test(cmd.name) ||
      (type === 1 && cmd.name !== cmd.name.toLowerCase())
    )
      return `${at}.name: invalid command name`;
    if (
      type === 1 &&
      (typeof cmd.description !== "string" || cmd.description.length < 1 || cmd.description.length > 100)
    )
      return `${at}.description: must be between 1 and 100 in length`;
    return null;
  }

  function validateCommands(body: unknown): string | null {
    if (!Array.isArray(body)) return "body must be an array of commands";
    if (body.length > 100) return "at most 100 commands";
    const names = new Set<string>();
    for (const [i, c] of body.entries()) {
      const problem = validateCommand(c, String(i));
      if (problem) return problem;
      const name = (c as { name: string }).name;
      if (names.has(name)) return `${i}.name: duplicate command name`;
      names.add(name);
    }
    return null;
  }

  const commandProblem = (problem: string) => invalidForm({ _errors: [{ code: "INVALID", message: problem }] });

  function storedCommand(guildId: string | null, command: Record<string, unknown>): StoredCommand {
    return {
      id: snowflake(),
      application_id: applicationId,
      ...(guildId ? { guild_id: guildId } : {}),
      version: snowflake(),
      type: 1,
      ...command,
    } as unknown as StoredCommand;
  }

  /**
   * A command scope: one guild's commands or the global ones (`/applications/{app}[/guilds/{guild}]/commands[/{id}]`).
   * PUT overwrites all, POST creates one (201) or overwrites the one of that name (200), GET lists or reads one,
   * PATCH edits one, DELETE removes one (204).
   */
  async function commandRoutes(
    request: Request,
    scope: string,
    guildId: string | null,
    id: string | undefined,
  ): Promise<Response> {
    const method = request.method;
    const list = commands.get(scope) ?? [];
    if (id === undefined) {
      if (method === "GET") return Response.json(list);
      if (method !== "PUT" && method !== "POST") return discordError(405, 0, "405: Method Not Allowed");
      const body = await jsonBody(request);
      if (!body.ok) return body.response;
      if (method === "PUT") {
        const problem = validateCommands(body.value);
        if (problem) return commandProblem(problem);
        const stored = (body.value as Record<string, unknown>[]).map((c) => storedCommand(guildId, c));
        commands.set(scope, stored);
        return Response.json(stored);
      }
      const problem = validateCommand(body.value, "command");
      if (problem) return commandProblem(problem);
      const created = body.value as Record<string, unknown>;
      const existing = list.find((c) => c.name === created.name);
      if (existing) {
        Object.assign(existing, created, { version: snowflake() });
        return Response.json(existing, { status: 200 });
      }
      if (list.length >= 100) return discordError(400, 30032, "Maximum number of application commands reached (100)");
      const stored = storedCommand(guildId, created);
      commands.set(scope, [...list, stored]);
      return Response.json(stored, { status: 201 });
    }
    const command = list.find((c) => c.id === id);
    if (!command) return discordError(404, 10063, "Unknown application command");
    if (method === "GET") return Response.json(command);
    if (method === "DELETE") {
      commands.set(
        scope,
        list.filter((c) => c !== command),
      );
      return new Response(null, { status: 204 });
    }
    if (method !== "PATCH") return discordError(405, 0, "405: Method Not Allowed");
    const body = await jsonBody(request);
    if (!body.ok) return body.response;
    const edited = { ...command, ...(body.value as Record<string, unknown>) };
    const problem = validateCommand(edited, "command");
    if (problem) return commandProblem(problem);
    Object.assign(command, body.value, { version: snowflake() });
    return Response.json(command);
  }

  return {
    routes: commandRoutes,
    /** The commands by scope as they stand. */
    byScope: (): Map<string, StoredCommand[]> => commands,
    reset(): void {
      commands = new Map();
    },
  };
}
