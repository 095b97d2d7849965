/**
 * The files `platform init` writes: a project that depends on `platform`,
 * type-checks with its own TypeScript, and tests itself with its own vitest.
 * Pure: the command reads the folder and the versions and writes the result.
 */

export interface ScaffoldInput {
  slug: string;
  /** The package.json already in the folder (after `npm install platform`), or null. */
  existing: Record<string, unknown> | null;
  /** How the project depends on `platform` when its package.json does not say yet. */
  platformSpec: string;
  /** Versions the platform is tested with, by package name: itty-router, typescript, vitest, @cloudflare/workers-types. */
  versions: Record<ScaffoldPackage, string>;
}

export const SCAFFOLD_PACKAGES = ["itty-router", "typescript", "vitest", "@cloudflare/workers-types"] as const;
export type ScaffoldPackage = (typeof SCAFFOLD_PACKAGES)[number];

/** Folder entries `platform init` writes into a folder that has them: an install of `platform` and version control. */
export const KEPT_ENTRIES = new Set([
  "package.json",
  "package-lock.json",
  "node_modules",
  ".git",
  ".gitignore",
  ".npmrc",
]);

/** The project's scripts. The CLI and vitest run under the Node 22 `platform` installs (node_modules/.bin/node). */
export const SCAFFOLD_SCRIPTS = {
  dev: "platform dev .",
  test: "vitest run",
  typecheck: "tsc",
  push: "platform push .",
} as const;

/** Packages whose install scripts fetch or check a binary the platform runs: esbuild, workerd, the Node 22 binary. */
const ALLOWED_INSTALL_SCRIPTS = { esbuild: true, node: true, workerd: true };

const SCAFFOLD_FIELDS = new Set([
  "name",
  "private",
  "type",
  "scripts",
  "dependencies",
  "devDependencies",
  "allowScripts",
]);

function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function packageJson({ slug, existing, platformSpec, versions }: ScaffoldInput): Record<string, unknown> {
  const base = existing ?? {};
  const dependencies = record(base.dependencies);
  const devDependencies = record(base.devDependencies);
  // The scaffold's own fields first, in the usual order; any other field the folder's package.json has follows.
  return {
    name: typeof base.name === "string" && base.name ? base.name : slug,
    private: base.private ?? true,
    type: "module",
    scripts: { ...record(base.scripts), ...SCAFFOLD_SCRIPTS },
    dependencies: {
      ...dependencies,
      platform: dependencies.platform ?? platformSpec,
      "itty-router": dependencies["itty-router"] ?? versions["itty-router"],
    },
    devDependencies: {
      ...devDependencies,
      "@cloudflare/workers-types":
        devDependencies["@cloudflare/workers-types"] ?? versions["@cloudflare/workers-types"],
      typescript: devDependencies.typescript ?? versions.typescript,
      vitest: devDependencies.vitest ?? versions.vitest,
    },
    allowScripts: { ...record(base.allowScripts), ...ALLOWED_INSTALL_SCRIPTS },
    ...Object.fromEntries(Object.entries(base).filter(([key]) => !SCAFFOLD_FIELDS.has(key))),
  };
}

const TSCONFIG = {
  compilerOptions: {
    target: "ES2023",
    module: "ESNext",
    moduleResolution: "Bundler",
    lib: ["ES2023"],
    // Project code runs in workerd: its globals (Request, ExecutionContext, …) come from the Workers types.
    types: ["@cloudflare/workers-types"],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    isolatedModules: true,
    verbatimModuleSyntax: true,
    allowImportingTsExtensions: true,
  },
  include: ["src", "test"],
};

const VITEST_CONFIG = `import { defineConfig } from "vitest/config";

// The project's tests run in Node; \`platform/testing\` runs its workflows and requests in the test's own
// process, with in-process stand-ins for the plugins (see the platform package's README).
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
`;

function indexSource(slug: string): string {
  return `import { Router } from "itty-router";
import { chatserver, NonRetryableError, PlatformError, workflow } from "platform";

const NAME = /^[\\p{L} .'-]{1,40}$/u;

const router = Router();

router.get("/", () =>
  new Response(\`<!doctype html><title>${slug}</title><h1>Hello from ${slug}</h1><p>Edit src/index.ts and reload: platform dev rebuilds on save.</p>\`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  }),
);

router.get("/api/hello/:name", ({ params }) => {
  if (!NAME.test(params.name!)) throw new PlatformError("invalid_input", "name must be 1–40 letters.");
  return Response.json({ hello: params.name });
});

// A durable workflow: start it with workflow.start(greet, { name }); a name that is not letters fails the run.
export const greet = workflow<{ name: string }, object, { greeting: string }>("greet", {
  start: async (ctx) => {
    if (!NAME.test(ctx.data.name)) throw new NonRetryableError(\`Cannot greet \${JSON.stringify(ctx.data.name)}: not a name.\`);
    return { done: true, result: { greeting: \`Hello \${ctx.data.name}!\` } };
  },
});

// A chat-server bot (platform plugin install chatserver): /hello answers with a button, a click edits that message.
chatserver.onCommand(
  "hello",
  async (command) => {
    await chatserver.reply(command, {
      content: \`Hello \${command.user?.name ?? "there"}!\`,
      components: [{ type: "button", customId: "wave", label: "Wave back" }],
    });
  },
  { description: "Say hello" },
);

chatserver.onComponent("wave", async (click) => {
  await chatserver.update(click, { content: \`\${click.user?.name ?? "Someone"} waved back.\`, components: [] });
});

export default router;
`;
}

const FIRST_TEST = `import { describe, expect, it } from "vitest";
import { testPlugin, testRequest, testWorkflow } from "platform/testing";
import project, { greet } from "../src/index.ts";

// testRequest sends a request to the project in this process, through the same entry platform dev runs it in.
describe("the project", () => {
  it("greets by name", async () => {
    const response = await testRequest(project, "/api/hello/Ada");
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ hello: "Ada" });
  });

  it("answers a name that is not letters with 400 and the platform's error JSON", async () => {
    const response = await testRequest(project, "/api/hello/%3Cscript%3E");
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_input" } });
  });
});

// testWorkflow runs a workflow here, on a virtual clock: sleeps and retries pass at once.
describe("the greet workflow", () => {
  it("greets", async () => {
    const run = await testWorkflow(greet, { name: "Ada" });
    await expect(run.result()).resolves.toEqual({ greeting: "Hello Ada!" });
  });

  it("fails on a name that is not letters; the cause is the step's error, with its line in src/index.ts", async () => {
    const run = await testWorkflow(greet, { name: "<b>" });
    await expect(run.result()).rejects.toMatchObject({
      code: "workflow_failed",
      cause: {
        message: 'Cannot greet "<b>": not a name.',
        stack: expect.stringMatching(/src[\\/]index\\.ts:\\d+/),
      },
    });
  });

  it("two starts with one idempotencyKey answer one run", async () => {
    const first = await testWorkflow(greet, { name: "Ada" }, { idempotencyKey: "signup-ada" });
    const second = await testWorkflow(greet, { name: "Ada" }, { idempotencyKey: "signup-ada" });
    expect(second.id).toBe(first.id);
  });
});

// testPlugin drives the bot's handlers with what the chat server sends, and records what they answered.
describe("the chat-server bot", () => {
  it("/hello replies with a button; a click on it updates the message", async () => {
    const bot = testPlugin(project, "chatserver");
    const hello = await bot.command("hello", { user: { id: "1", name: "Ada" } });
    expect(hello.reply).toEqual({
      content: "Hello Ada!",
      components: [{ type: "button", customId: "wave", label: "Wave back" }],
    });

    const click = await bot.component("wave", { user: { id: "2", name: "Grace" } });
    expect(click.update).toEqual({ content: "Grace waved back.", components: [] });
  });
});
`;

const json = (value: unknown) => JSON.stringify(value, null, 2) + "\n";

/** What a project's `.gitignore` must name: the local state and build, installs, and `.dev.vars` (secrets for `platform dev`). */
export const IGNORED_ENTRIES = [".platform/", "node_modules/", ".dev.vars"];

/**
 * `.gitignore` with every entry of {@link IGNORED_ENTRIES} it lacks appended
 * (all of them for a folder that has none); null when it names them all.
 */
export function completedGitignore(existing: string | null): string | null {
  const lines = new Set((existing ?? "").split(/\r?\n/).map((line) => line.trim()));
  const missing = IGNORED_ENTRIES.filter((entry) => !lines.has(entry) && !lines.has(entry.replace(/\/$/, "")));
  if (missing.length === 0) return null;
  const kept = existing && !existing.endsWith("\n") ? `${existing}\n` : (existing ?? "");
  return `${kept}${missing.join("\n")}\n`;
}

/** Relative path → contents. `.gitignore` (`gitignore`: the folder's own, or null) only when it lacks an entry. */
export function scaffoldFiles(input: ScaffoldInput, options: { gitignore: string | null }): Record<string, string> {
  const gitignore = completedGitignore(options.gitignore);
  return {
    "package.json": json(packageJson(input)),
    "tsconfig.json": json(TSCONFIG),
    "vitest.config.ts": VITEST_CONFIG,
    "src/index.ts": indexSource(input.slug),
    "test/index.test.ts": FIRST_TEST,
    ...(gitignore === null ? {} : { ".gitignore": gitignore }),
  };
}
