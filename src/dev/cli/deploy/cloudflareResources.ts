import type { PlatformWorkerConfig } from "./platformWorkerConfigs.ts";
import type { Wrangler } from "./wranglerRunner.ts";

export type ResourceKind = "d1" | "queue" | "dispatch-namespace";

/** An account-level resource the workers bind by name; it must exist before any of them is uploaded. */
export interface PlatformResource {
  kind: ResourceKind;
  name: string;
  /** Script names of the workers that bind it. */
  boundBy: string[];
}

export interface EnsuredResource extends PlatformResource {
  id: string;
  created: boolean;
}

export const RESOURCE_LABEL: Record<ResourceKind, string> = {
  d1: "D1 database",
  queue: "queue",
  "dispatch-namespace": "dispatch namespace",
};

export class ResourceNotFound extends Error {
  readonly code = "resource_not_found";
}

/** The resources the configs bind, in the order they are created: D1, queues, dispatch namespaces. */
export function platformResources(workers: PlatformWorkerConfig[]): PlatformResource[] {
  const resources: PlatformResource[] = [];
  const add = (kind: ResourceKind, name: string | undefined, worker: string) => {
    if (!name) return;
    const known = resources.find((r) => r.kind === kind && r.name === name);
    if (!known) resources.push({ kind, name, boundBy: [worker] });
    else if (!known.boundBy.includes(worker)) known.boundBy.push(worker);
  };
  for (const { name: worker, raw } of workers) {
    for (const db of raw.d1_databases ?? []) add("d1", db.database_name, worker);
    for (const q of [...(raw.queues?.producers ?? []), ...(raw.queues?.consumers ?? [])]) add("queue", q.queue, worker);
    for (const ns of raw.dispatch_namespaces ?? []) add("dispatch-namespace", ns.namespace, worker);
  }
  const rank: ResourceKind[] = ["d1", "queue", "dispatch-namespace"];
  return resources.sort((a, b) => rank.indexOf(a.kind) - rank.indexOf(b.kind));
}

/** `wrangler d1 list --json`: an array of `{ uuid, name, … }`. */
export function d1IdFromList(stdout: string, name: string): string | undefined {
  // Warnings may come first (`▲ [WARNING] …`): the array starts at a line opening with `[` then `{` or `]`.
  const start = stdout.search(/^\[\s*[{\]]/m);
  if (start < 0) throw new Error(`\`wrangler d1 list --json\` printed no list:\n${stdout}`);
  const databases = JSON.parse(stdout.slice(start)) as Array<{ uuid?: string; name?: string }>;
  return databases.find((db) => db.name === name)?.uuid;
}

/** `wrangler queues list`: a table (`│ id │ name │ created_on │ …`) with no JSON form. */
export function queueIdFromList(stdout: string, name: string): string | undefined {
  for (const line of stdout.split("\n")) {
    const cells = line
      .split(/[│|]/)
      .map((cell) => cell.trim())
      .filter(Boolean);
    if (cells.includes(name)) return cells.find((cell) => /^[0-9a-f]{32}$/i.test(cell));
  }
  return undefined;
}

/** `wrangler dispatch-namespace list`: the API's array printed by Node (`{ namespace_id: '…', namespace_name: '…' }`). */
export function dispatchNamespaceIdFromList(stdout: string, name: string): string | undefined {
  const field = (block: string, key: string) =>
    new RegExp(`["']?${key}["']?\\s*:\\s*["']([^"']+)["']`).exec(block)?.[1];
  for (const block of stdout.match(/\{[^{}]*\}/g) ?? [])
    if (field(block, "namespace_name") === name) return field(block, "namespace_id");
  return undefined;
}

const COMMANDS: Record<
  ResourceKind,
  { list: string[]; create: (name: string) => string[]; idIn: (stdout: string, name: string) => string | undefined }
> = {
  d1: { list: ["d1", "list", "--json"], create: (n) => ["d1", "create", n], idIn: d1IdFromList },
  queue: { list: ["queues", "list"], create: (n) => ["queues", "create", n], idIn: queueIdFromList },
  "dispatch-namespace": {
    list: ["dispatch-namespace", "list"],
    create: (n) => ["dispatch-namespace", "create", n],
    idIn: dispatchNamespaceIdFromList,
  },
};

/** Reuses the resource when the account has one of that name, else creates it; either way reads its id back. */
export async function ensureResource(wrangler: Wrangler, resource: PlatformResource): Promise<EnsuredResource> {
  const commands = COMMANDS[resource.kind];
  const lookUp = async () => commands.idIn((await wrangler(commands.list)).stdout, resource.name);
  const existing = await lookUp();
  if (existing) return { ...resource, id: existing, created: false };
  await wrangler(commands.create(resource.name));
  const created = await lookUp();
  if (!created)
    throw new ResourceNotFound(
      `Created ${RESOURCE_LABEL[resource.kind]} "${resource.name}" but \`wrangler ${commands.list.join(" ")}\` does not list it.`,
    );
  return { ...resource, id: created, created: true };
}
