import path from "node:path";
import { Response as MiniflareResponse, type V4WorkerOptions } from "miniflare";
import { describe, expect, it } from "vitest";
import type { Unstable_RawConfig } from "wrangler";
import type { ProjectBuild } from "#src/dev/cli/build/buildProject.ts";
import { PLATFORM_SECRETS } from "#src/dev/cli/deploy/platformEnvironment.ts";
import { type PlatformWorkerConfig, readPlatformWorkerConfigs } from "#src/dev/cli/deploy/platformWorkerConfigs.ts";
import { readDeployedWorkers } from "#src/dev/cli/dev/workerd/deployedWorkers.ts";
import { localCrons } from "#src/dev/cli/dev/crons/localCrons.ts";
import {
  type LocalLogin,
  type LocalPlatformInput,
  localPlatformConfig,
} from "#src/dev/cli/dev/workerd/localPlatform.ts";
import {
  LOCAL_PLUGIN_IDS,
  type LocalPluginId,
  type LocalPluginSecrets,
} from "#src/dev/cli/dev/providers/localPlugins.ts";
import { REPO_ROOT } from "#src/dev/cli/repoPaths.ts";
import { workerdPoolBindings } from "#test/support/node/workerdPoolOptions.ts";

// What `npm run deploy` ships (each wrangler.toml as wrangler reads it, and the secrets the deploy sets)
// against what `platform dev` and `platform up` run: every deployed binding, var, secret, actor, queue,
// dispatch namespace, asset directory and cron must have its local counterpart.

/** One thing a deployed worker has, and whether a local platform's workers give it the same. */
interface DeployedItem {
  item: string;
  isLocal(local: V4WorkerOptions, all: V4WorkerOptions[]): boolean;
}

type Named = Record<string, unknown>;
const keysOf = (value: unknown) => Object.keys((value ?? {}) as Named);
const has = (record: unknown, key: string) => keysOf(record).includes(key);
const serviceName = (target: unknown) =>
  typeof target === "string" ? target : (target as { name?: string } | undefined)?.name;

/** Config keys that describe the worker rather than bind anything. */
const NOT_BINDINGS = new Set(["name", "main", "compatibility_date", "compatibility_flags", "routes", "migrations"]);

function deployedItems(worker: PlatformWorkerConfig): DeployedItem[] {
  const raw: Unstable_RawConfig = worker.raw;
  const configDir = path.dirname(path.join(REPO_ROOT, worker.configPath));
  const items: DeployedItem[] = [
    {
      item: `compatibility ${raw.compatibility_date} ${(raw.compatibility_flags ?? []).join(",")}`,
      isLocal: (local) =>
        local.compatibilityDate === raw.compatibility_date &&
        (local.compatibilityFlags ?? []).join(",") === (raw.compatibility_flags ?? []).join(","),
    },
  ];
  const add = (item: string, isLocal: DeployedItem["isLocal"]) => items.push({ item, isLocal });
  const known = new Set(NOT_BINDINGS);
  const read = <K extends keyof Unstable_RawConfig>(key: K) => {
    known.add(key);
    return raw[key];
  };

  for (const name of keysOf(read("vars"))) add(`var ${name}`, (local) => has(local.bindings, name));
  for (const secret of PLATFORM_SECRETS.filter((s) => s.workers.includes(worker.name)))
    add(
      `secret ${secret.secret}`,
      (local) => typeof (local.bindings as Named | undefined)?.[secret.secret] === "string",
    );
  for (const db of read("d1_databases") ?? [])
    add(`D1 database ${db.binding}`, (local) => has(local.d1Databases, db.binding));
  for (const kv of read("kv_namespaces") ?? [])
    add(`KV namespace ${kv.binding}`, (local) => has(local.kvNamespaces, kv.binding));
  for (const service of read("services") ?? [])
    add(`service ${service.binding} → ${service.service}`, (local, all) => {
      const target = serviceName((local.serviceBindings as Named | undefined)?.[service.binding]);
      return target === service.service && all.some((w) => w.name === target);
    });
  for (const actor of read("durable_objects")?.bindings ?? [])
    add(
      `Durable Object ${actor.name} (${actor.class_name}${actor.script_name ? ` of ${actor.script_name}` : ""})`,
      (local, all) => {
        const bound = (local.durableObjects as Named | undefined)?.[actor.name] as
          | { className?: string; scriptName?: string }
          | undefined;
        if (bound?.className !== actor.class_name || bound.scriptName !== actor.script_name) return false;
        // The class must be hosted (declared without script_name) by the worker that exports it.
        const host = all.find((w) => w.name === (actor.script_name ?? worker.name));
        return Object.values((host?.durableObjects ?? {}) as Named).some(
          (d) =>
            (d as { className?: string; scriptName?: string }).className === actor.class_name &&
            !(d as { scriptName?: string }).scriptName,
        );
      },
    );
  const queues = read("queues");
  for (const producer of queues?.producers ?? [])
    add(
      `queue producer ${producer.binding} → ${producer.queue}`,
      (local) =>
        ((local.queueProducers as Named | undefined)?.[producer.binding] as { queueName?: string } | undefined)
          ?.queueName === producer.queue,
    );
  for (const consumer of queues?.consumers ?? [])
    add(`queue consumer of ${consumer.queue}`, (local) => has(local.queueConsumers, consumer.queue));
  // Dispatch namespaces do not run locally: the worker gets the dispatcher (LOCAL_SCRIPTS, and
  // `platform up`'s LOCAL_DISPATCH in front of its pushed projects) in their place, reaching some project.
  for (const namespace of read("dispatch_namespaces") ?? [])
    add(`dispatch namespace ${namespace.binding}`, (local) => {
      const scripts = (local.bindings as Named | undefined)?.LOCAL_SCRIPTS;
      if (typeof scripts !== "string" || has(local.bindings, namespace.binding)) return false;
      const bindings = Object.values(JSON.parse(scripts) as Record<string, string>);
      const front = has(local.serviceBindings, "LOCAL_DISPATCH");
      return (bindings.length > 0 || front) && bindings.every((binding) => has(local.serviceBindings, binding));
    });
  const assets = read("assets");
  if (assets?.directory) {
    const directory = path.resolve(configDir, assets.directory);
    add(`assets from ${assets.directory}`, (local) => local.assets?.directory === directory);
  }
  for (const cron of read("triggers")?.crons ?? [])
    add(`cron "${cron}"`, (_local, all) => localCrons(all).some((c) => c.worker === worker.name && c.cron === cron));
  // Any other binding kind: its binding name must be bound locally somehow.
  for (const key of Object.keys(raw).filter((k) => !known.has(k as keyof Unstable_RawConfig))) {
    const entries = [raw[key as keyof Unstable_RawConfig]].flat() as Named[];
    for (const entry of entries) {
      const name = (entry?.binding ?? entry?.name) as string | undefined;
      add(
        `${key} ${name ?? "(unnamed)"}`,
        (local) => name !== undefined && Object.values(local as Named).some((field) => has(field, name)),
      );
    }
  }
  return items;
}

const deployed = readPlatformWorkerConfigs(REPO_ROOT);
const deployedWorkers = await readDeployedWorkers(REPO_ROOT);

const login: LocalLogin = {
  port: 9101,
  publicUrl: "http://127.0.0.1:9101",
  issuer: "http://127.0.0.1:9102",
  clientId: "platform-login",
  clientSecret: "client-secret",
  flowSecret: "f".repeat(64),
  projectsBaseUrl: "http://localhost:9000",
};
const pluginSecrets: LocalPluginSecrets = {
  tokenEncryptionKey: "a".repeat(64),
  stateSecret: "s".repeat(64),
  chatserver: {
    applicationId: "1",
    clientId: "1",
    clientSecret: "c",
    botToken: "b",
    signingSeed: "0".repeat(64),
    publicKey: "p",
  },
  workspace: { clientId: "w", clientSecret: "c", signingSecret: "s" },
  email: { apiKey: "re_local" },
};
const project = { id: 1, slug: "demo", scriptName: "project-1-demo", workerSecret: "w".repeat(64) };

function input(overrides: Partial<LocalPlatformInput>): LocalPlatformInput {
  return {
    host: "127.0.0.1",
    port: 9000,
    ports: {
      api: 9001,
      login: 9101,
      traces: 9102,
      plugins: Object.fromEntries(
        deployedWorkers.filter((w) => w.configPath.startsWith("src/plugins/")).map((w, i) => [w.name, 9010 + i]),
      ),
      fakes: Object.fromEntries(LOCAL_PLUGIN_IDS.map((id, i) => [id, 9020 + i])),
    },
    stateDir: "/nonexistent/.platform",
    deployed: deployedWorkers,
    scripts: {
      workers: Object.fromEntries(deployedWorkers.map((w) => [w.name, `/nonexistent/${w.name}.js`])),
      fakes: Object.fromEntries(LOCAL_PLUGIN_IDS.map((id) => [id, `/nonexistent/fake-${id}.js`])) as Record<
        LocalPluginId,
        string
      >,
    },
    adminToken: "admin",
    secretsKey: "5e".repeat(32),
    login: null,
    pluginSecrets,
    project: null,
    build: null,
    ...overrides,
  };
}
const build = {
  bundlePath: "/nonexistent/project.js",
  durableObjects: ["WorkflowRun", "WorkflowRunIndex", "WorkflowFlowKey"],
};

/** Each local platform, and what it deliberately lacks of the deploy (by `<worker>` or `<worker>: <item>`), and why. */
const LOCAL_PLATFORMS: { name: string; input: LocalPlatformInput; notLocal: Record<string, string> }[] = [
  {
    name: "platform dev",
    input: input({ project, build: build as ProjectBuild }),
    notLocal: {
      "platform-login": "the login worker runs only with --login oidc (the runtime's form signs in)",
      "platform-api: var LOGIN_PUBLIC_URL": "no login worker runs to point at",
      "platform-api: secret CLOUDFLARE_API_TOKEN": "platform dev uploads nothing: the project runs from its build",
    },
  },
  {
    name: "platform dev --login oidc",
    input: input({ project, build: build as ProjectBuild, login }),
    notLocal: {
      "platform-api: secret CLOUDFLARE_API_TOKEN": "platform dev uploads nothing: the project runs from its build",
    },
  },
  {
    name: "platform up",
    input: input({
      login,
      uploads: {
        target: { apiBase: "http://127.0.0.1:9200", apiToken: "t", accountId: "local", namespace: "local" },
        front: async () => new MiniflareResponse("a pushed project"),
      },
    }),
    notLocal: {},
  },
];

/** What a local platform lacks of the deploy, one `<worker>` or `<worker>: <item>` each. */
function missingLocally(workers: V4WorkerOptions[]): string[] {
  return deployed.flatMap((worker) => {
    const local = workers.find((w) => w.name === worker.name);
    if (!local) return [worker.name];
    return deployedItems(worker)
      .filter(({ isLocal }) => !isLocal(local, workers))
      .map(({ item }) => `${worker.name}: ${item}`);
  });
}

describe("the local platform runs what `npm run deploy` ships", () => {
  it("reads all six platform workers' configs", () => {
    expect(deployed.map((w) => w.name).sort()).toEqual([
      "platform-api",
      "platform-gateway",
      "platform-login",
      "platform-plugin-chatserver",
      "platform-plugin-email-send",
      "platform-plugin-workspace",
    ]);
  });

  describe.each(LOCAL_PLATFORMS)("$name", ({ input, notLocal }) => {
    const workers = localPlatformConfig(input).workers as V4WorkerOptions[];
    const missing = missingLocally(workers);

    it("has every deployed worker's bindings, vars, secrets, actors, queues, assets and crons", () => {
      expect(
        missing.filter((item) => !(item in notLocal)),
        "deployed, but not in the local platform",
      ).toEqual([]);
    });

    it("lacks only what it says it lacks, and lacks it indeed", () => {
      expect(Object.keys(notLocal).filter((item) => !missing.includes(item))).toEqual([]);
    });
  });

  it("the workerd test pool binds the API worker's D1 databases, actors and queue producers", async () => {
    const api = deployed.find((w) => w.name === "platform-api")!;
    const pool = (await workerdPoolBindings(REPO_ROOT)) as V4WorkerOptions;
    const apiItems = deployedItems(api).filter(({ item }) =>
      /^(D1 database|Durable Object|queue producer) /.test(item),
    );
    expect(apiItems.length).toBeGreaterThan(0);
    // The pool's one worker hosts every class itself, so an actor counts as its own.
    const harness = { ...pool, name: "platform-api" };
    expect(apiItems.filter(({ isLocal }) => !isLocal(harness, [harness])).map(({ item }) => item)).toEqual([]);
  });

  it.each([
    ["wrangler.toml's", undefined, "10000"],
    ["`platform up --max-live-runs 5`'s", 5, "5"],
  ])("the API worker's MAX_LIVE_RUNS_PER_ACCOUNT is %s", (_name, maxLiveRunsPerAccount, value) => {
    const platform = LOCAL_PLATFORMS.find((p) => p.name === "platform up")!;
    const workers = localPlatformConfig({
      ...platform.input,
      ...(maxLiveRunsPerAccount === undefined ? {} : { maxLiveRunsPerAccount }),
    }).workers as V4WorkerOptions[];
    const api = workers.find((w) => w.name === "platform-api")!;
    expect((api.bindings as Named).MAX_LIVE_RUNS_PER_ACCOUNT).toBe(value);
  });
});
