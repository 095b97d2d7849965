import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CliError, type Command } from "../commandLine.ts";
import { projectSlugFor } from "../dev/projectSlugFor.ts";
import { REPO_ROOT, RUNTIME_DIR } from "../repoPaths.ts";

/** A word for `sh -c` (npm scripts): single-quoted unless it is plainly safe. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The scaffold's npm scripts call this repository's CLI by absolute path, so
 * `npm run dev` works in the new folder with nothing installed there and no
 * `platform` on PATH (bin/platform.js re-runs itself under the repository's Node 22).
 */
function platformScript(args: string): string {
  return `node ${shellWord(path.join(REPO_ROOT, "bin/platform.js"))} ${args}`;
}

function indexSource(slug: string): string {
  return `import { Router } from "itty-router";
import { PlatformError } from "platform";

const router = Router();

router.get("/", () =>
  new Response(\`<!doctype html><title>${slug}</title><h1>Hello from ${slug}</h1><p>Edit src/index.ts and reload: platform dev rebuilds on save.</p>\`, {
    headers: { "content-type": "text/html; charset=utf-8" },
  }),
);

router.get("/api/hello/:name", ({ params }) => {
  if (!/^[\\p{L} .'-]{1,40}$/u.test(params.name!)) throw new PlatformError("invalid_input", "name must be 1–40 letters.");
  return Response.json({ hello: params.name });
});

export default router;
`;
}

/** `platform init <dir>`: scaffolds a project that builds against this repository's `platform`. */
export const initCommand: Command = {
  summary: "Create a new project that imports `platform`.",
  usage: "platform init <dir>",
  help: `
Creates <dir> with src/index.ts (an itty-router Router), package.json and a
tsconfig.json whose paths point at this repository's runtime, so the project
needs no npm install of its own. Its \`npm run dev\` and \`npm run push\` call
this repository's bin/platform.js by absolute path, so they work without
\`platform\` on PATH (\`npm link\` in the repository puts it there). Refuses a
directory that is not empty.

Then run:  cd <dir> && npm run dev`,
  options: {},
  async run({ positionals }) {
    const target = positionals[0];
    if (!target || positionals.length > 1)
      throw new CliError("platform init takes exactly one directory. Usage: platform init <dir>", 2);
    const dir = path.resolve(target);
    if (existsSync(dir) && readdirSync(dir).length > 0)
      throw new CliError(`${dir} is not empty; choose a new directory.`);
    mkdirSync(path.join(dir, "src"), { recursive: true });
    const slug = projectSlugFor(dir);
    const files: Record<string, string> = {
      "package.json":
        JSON.stringify(
          {
            name: slug,
            private: true,
            type: "module",
            scripts: { dev: platformScript("dev ."), push: platformScript("push .") },
          },
          null,
          2,
        ) + "\n",
      "tsconfig.json":
        JSON.stringify(
          {
            compilerOptions: {
              target: "ES2023",
              module: "ESNext",
              moduleResolution: "Bundler",
              strict: true,
              noEmit: true,
              types: ["@cloudflare/workers-types"],
              paths: { platform: [path.join(RUNTIME_DIR, "index.ts")] },
            },
            include: ["src"],
          },
          null,
          2,
        ) + "\n",
      ".gitignore": ".platform/\nnode_modules/\n",
      "src/index.ts": indexSource(slug),
    };
    for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
    console.log(`Created project "${slug}" in ${dir}`);
    console.log(`Next: cd ${shellWord(target)} && npm run dev`);
  },
};
