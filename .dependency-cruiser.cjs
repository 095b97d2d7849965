// The import direction of src/ (issue 10): core <- contracts <- engine <- runtime; platform builds on core and
// contracts only; the console is static files; dev is reachable from nowhere but itself (and tests and bench,
// which are not cruised). `npm run check:deps` runs this; a violation prints the rule's name.
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
        "cloudflare:* modules; those belong in src/runtime or src/platform.",
      severity: "error",
      from: { path: "^src/(core|contracts|engine)/" },
      to: { path: "^cloudflare:" },
    },
    {
      name: "runtime-imports-only-core-contracts-engine-runtime",
      comment: "src/runtime (the `platform` module) builds on core, contracts and engine; never on platform/ or dev/.",
      severity: "error",
      from: { path: "^src/runtime/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|engine|runtime)/" },
    },
    {
      name: "node-apis-only-in-runtime-node",
      comment: "The runtime runs on Workers; only src/runtime/node (the Node host) may import node:* modules.",
      severity: "error",
      from: { path: "^src/runtime/", pathNot: "^src/runtime/node/" },
      to: { dependencyTypes: ["core"] },
    },
    {
      name: "platform-imports-only-core-contracts-platform",
      comment:
        "Platform workers share only core and contracts with the runtime; dev wiring is mounted by `platform dev`.",
      severity: "error",
      from: { path: "^src/platform/" },
      to: { path: "^src/", pathNot: "^src/(core|contracts|platform)/" },
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
      name: "objects-only-re-export-runtime-and-platform",
      comment: "src/objects keeps the design card's paths as thin re-exports of runtime/ and platform/ classes.",
      severity: "error",
      from: { path: "^src/objects/" },
      to: { path: "^src/", pathNot: "^src/(objects|runtime|platform)/" },
    },
    {
      name: "nothing-imports-objects",
      comment: "src/objects exists for the design card's paths only; code imports the real modules (tests may use it).",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(objects|dev)/" },
      to: { path: "^src/objects/" },
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
