import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { buildProject } from "#src/dev/cli/build/buildProject.ts";
import { RUNTIME_DIR } from "#src/dev/cli/repoPaths.ts";
import { startWorker } from "../lib/miniflareHost.ts";
import { quantile } from "../lib/stats.ts";

const REPO = path.resolve(import.meta.dirname, "../..");
const AUTH_DIR = path.join(RUNTIME_DIR, "auth") + path.sep;

export interface SigninResults {
  authUser: { calls: number; medianMs: number; p95Ms: number; blocks: number };
  bundles: {
    withoutAuthBytes: number;
    withAuthBytes: number;
    authCodeBytesWithoutAuth: number;
    authCodeBytesWithAuth: number;
  };
}

/** Bytes of `src/runtime/auth/**` that reached a bundle, from esbuild's metafile. */
async function authBytesIn(projectDir: string, outDir: string): Promise<{ bundleBytes: number; authBytes: number }> {
  const build = await buildProject(projectDir, outDir);
  const authBytes = Object.entries(build.bytesBySource)
    .filter(([source]) => source.startsWith(AUTH_DIR))
    .reduce((total, [, bytes]) => total + bytes, 0);
  return { bundleBytes: build.bundleBytes, authBytes };
}

/** Sign-in figures: `auth.user()` on a signed-in request inside workerd, and what `auth` adds to a bundle. */
export async function benchSignin(workDir: string, progress: (line: string) => void): Promise<SigninResults> {
  mkdirSync(workDir, { recursive: true });
  const project = path.join(REPO, "bench/projects/signin");
  const build = await buildProject(project, path.join(workDir, "signin-build"));
  const secret = randomBytes(32).toString("hex");
  const host = await startWorker(
    {
      name: "bench-signin",
      scriptPath: build.bundlePath,
      compatibilityDate: "2026-10-30",
      compatibilityFlags: ["nodejs_compat"],
      bindings: { PLATFORM_WORKER_SECRET: secret, PLATFORM_PROJECT_ID: "1", PLATFORM_LOCAL: "1" },
    },
    path.join(workDir, "signin-state"),
  );
  let blockMs: number[] = [];
  try {
    progress("warm-up");
    await host.call("/bench/auth-user?calls=500&block=100");
    progress("timing auth.user()");
    const result = await host.call<{ calls: number; found: number; blockMs: number[] }>(
      "/bench/auth-user?calls=5000&block=100",
    );
    if (result.found !== result.calls)
      throw new Error(`auth.user() found the user in ${result.found} of ${result.calls} calls`);
    blockMs = result.blockMs;
  } finally {
    await host.dispose();
  }

  progress("bundles with and without auth");
  const plain = path.join(workDir, "plain");
  const withAuth = path.join(workDir, "with-auth");
  const body = (useAuth: boolean) =>
    `import { Router } from "itty-router";\n${useAuth ? 'import { auth } from "platform";\nauth.allow();\n' : ""}const router = Router();\nrouter.get("/", ${useAuth ? "async (req) => Response.json(await auth.user(req))" : '() => new Response("hi")'});\nexport default router;\n`;
  for (const [dir, useAuth] of [
    [plain, false],
    [withAuth, true],
  ] as const) {
    mkdirSync(path.join(dir, "src"), { recursive: true });
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: path.basename(dir), private: true, type: "module" }),
    );
    writeFileSync(path.join(dir, "src/index.ts"), body(useAuth));
  }
  const without = await authBytesIn(plain, path.join(plain, ".platform/build"));
  const withA = await authBytesIn(withAuth, path.join(withAuth, ".platform/build"));
  return {
    authUser: {
      calls: blockMs.length * 100,
      medianMs: quantile(blockMs, 0.5),
      p95Ms: quantile(blockMs, 0.95),
      blocks: blockMs.length,
    },
    bundles: {
      withoutAuthBytes: without.bundleBytes,
      withAuthBytes: withA.bundleBytes,
      authCodeBytesWithoutAuth: without.authBytes,
      authCodeBytesWithAuth: withA.authBytes,
    },
  };
}

export function formatSignin(outcome: SigninResults | { error: string }): string {
  if ("error" in outcome) return `S. Sign-in: not measured (${outcome.error})`;
  const { authUser, bundles } = outcome;
  const ms = (v: number) => `${(v * 1000).toFixed(1)} µs`;
  return [
    "S. Sign-in (project built by buildProject, run in workerd through Miniflare)",
    `  auth.user() on a signed-in request (decrypt + check the session cookie; a fresh Request per call), ${authUser.calls} calls timed in blocks of 100 inside the worker:`,
    `    per call: median ${ms(authUser.medianMs)}   p95 ${ms(authUser.p95Ms)}`,
    `  bundle of the same small project: without auth ${bundles.withoutAuthBytes} bytes, with auth ${bundles.withAuthBytes} bytes`,
    `  bytes of src/runtime/auth/** in the bundle: without auth ${bundles.authCodeBytesWithoutAuth}, with auth ${bundles.authCodeBytesWithAuth}` +
      `  -> ${bundles.authCodeBytesWithoutAuth === 0 ? "PASS" : "MISS"} zero bytes of auth code when unused`,
  ].join("\n");
}
