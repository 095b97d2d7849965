// The import direction of src/: core <- contracts <- engine <- objects <- runtime (the project side);
// core <- contracts <- objects <- workers <- plugins (the platform side); the console is static files; dev is
// reachable from nowhere but itself (and tests and bench, which are not cruised); no cycles. `npm run check:deps` runs this; a violation prints the rule's name.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "core-imports-only-core",
      comment: "src/core holds the primitives every layer shares; it may not depend on any other folder of src/.",
      severity: "error",
      from: { path: "^src/core/" },
      to: { path: "^src/", pathNot: "^src/core/" },
    },
    {
      name: "contracts-import-only-core",
      comment: "src/contracts are wire types shared by plugin workers and the runtime; they build on src/core only.",
      severity: "error",
      from: { path: "^src/contracts/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts)/" },
    },
    {
      name: "engine-imports-only-core-and-contracts",
      comment: "src/engine is the pure workflow engine; it knows nothing of the runtime, the platform or dev.",
      severity: "error",
      from: { path: "^src/engine/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|engine)/" },
    },
    {
      name: "shared-layers-use-no-node-apis",
      comment:
        "src/core, src/contracts and src/engine run both on Workers and on Node, so they may not import node:* " +
        "modules; those belong in src/runtime/node or src/dev.",
      severity: "error",
      from: { path: "^src/(core|contracts|engine)/" },
      // Node built-ins are reported by name without the node: prefix, as dependency type "core".
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "shared-layers-use-no-workers-apis",
      comment:
        "src/core, src/contracts and src/engine run both on Workers and on Node, so they may not import " +
        "cloudflare:* modules; those belong in src/objects, src/runtime, src/workers or src/plugins.",
      severity: "error",
      from: { path: "^src/(core|contracts|engine)/" },
      to: { path: "^cloudflare:" },
    },
    {
      name: "objects-import-only-core-contracts-engine",
      comment:
        "src/objects holds the actor classes; they build on core, contracts and engine, and learn the rest from " +
        "whoever hosts them (workflowRunHost.ts), so every worker can host an actor without pulling in another layer.",
      severity: "error",
      from: { path: "^src/objects/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|engine|objects)/" },
    },
    {
      name: "runtime-imports-only-core-contracts-engine-objects-runtime",
      comment:
        "src/runtime (the `platform` module) builds on core, contracts, engine and objects; never on workers, plugins or dev.",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|engine|objects|runtime)/" },
    },
    {
      name: "node-apis-only-in-runtime-node",
      comment: "The runtime runs on Workers; only src/runtime/node (the Node host) may import node:* modules.",
      severity: "error",
      from: { path: "^src/(runtime|objects)/", pathNot: "^src/runtime/node/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "workers-import-only-core-contracts-objects-workers",
      comment:
        "The platform's own workers (api, gateway, login, dispatch, db) share only core, contracts and the actor " +
        "classes with the rest; they never bundle the runtime, the engine, a plugin or dev.",
      severity: "error",
      from: { path: "^src/workers/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|objects|workers)/" },
    },
    {
      name: "plugins-import-only-core-contracts-objects-workers-plugins",
      comment:
        "Plugin workers build on core, contracts, the actor classes and the workers' shared D1 access, dispatcher " +
        "and rate quotas; never on the runtime, the engine or dev.",
      severity: "error",
      from: { path: "^src/plugins/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|objects|workers/(db|dispatch|quota)|plugins)/" },
    },
    {
      name: "platform-workers-never-reach-the-runtime",
      comment:
        "Nothing a platform or plugin worker bundles may lead, through any chain of imports, to the project-side " +
        "runtime or engine (the actor classes they host included).",
      severity: "error",
      from: { path: "^src/(workers|plugins)/" },
      to: { path: "^src/(runtime|engine)/", reachable: true },
    },
    {
      name: "console-imports-nothing",
      comment: "src/console is static browser files served as they are; they may import only each other.",
      severity: "error",
      from: { path: "^src/console/" },
      to: { path: "^src/", pathNot: "^src/console/" },
    },
    {
      name: "nothing-imports-dev",
      comment: "src/dev (CLI, fakes, dev-only routes) is never part of a deployed worker; only dev itself imports it.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/dev/" },
      to: { path: "^src/dev/" },
    },
    {
      name: "deployed-code-uses-no-dev-dependencies",
      comment:
        "devDependencies (esbuild, miniflare, oidc-provider) are dev tools: a project installing `platform` does " +
        "not get them, and a worker must not bundle them. Only src/dev may import them.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/dev/" },
      to: { dependencyTypes: ["npm-dev"] },
    },
    {
      name: "miniflare-loads-through-miniflareModule",
      comment:
        "Miniflare is one 5.8 MB CommonJS file: an ESM import of its names makes Node lex all of it on every " +
        "`platform dev` and `platform up` start (half a second of CPU). src/dev/cloudflare/miniflareModule.ts " +
        "loads it with require(); elsewhere, only its types.",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/dev/cloudflare/miniflareModule[.]ts$" },
      to: { path: "node_modules/miniflare/", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "no-cycles",
      comment: "No module reaches itself through its imports: each concept builds on what is below it.",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "imports-resolve",
      comment:
        "Every import must resolve to a file, so the rules above see every edge (cloudflare:* is provided by workerd).",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    // swc parses the TypeScript (dependency-cruiser's tsc parser needs typescript < 7; this repo runs 7). swc keeps
    // type-only imports as edges: a type from a higher layer ties the lower one to it just the same.
    parser: "swc",
    doNotFollow: { path: "node_modules" },
    // Resolves the `platform` path alias the demo and the docs use.
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".json"],
    },
  },
};
