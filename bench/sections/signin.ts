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
  authUser: {
    calls: number;
    medianMs: number;
    p95Ms: number;
    blocks: number;
    platformChecks: number;
    /** workerd CPU per call (µs), median over trials, minus a request that does everything but the timed calls. */
    cpuMedianUs: number | null;
    trials: number;
  };
  firstLook: { calls: number; medianMs: number; p95Ms: number; platformChecks: number };
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
  // The platform's session records, as a stub in Node: every session is active. Counted, so the
  // report can say how many reads asked it.
  let platformChecks = 0;
  const host = await startWorker(
    {
      name: "bench-signin",
      scriptPath: build.bundlePath,
      compatibilityDate: "2026-10-30",
      compatibilityFlags: ["nodejs_compat"],
      bindings: { PLATFORM_WORKER_SECRET: secret, PLATFORM_PROJECT_ID: "1", PLATFORM_LOCAL: "1" },
      serviceBindings: {
        PLATFORM_API: async (request) => {
          if (new URL(request.url).pathname !== "/internal/auth/sessions/check")
            return new Response("not found", { status: 404 });
          platformChecks++;
          return Response.json({ active: true }) as never;
        },
      },
    },
    path.join(workDir, "signin-state"),
  );
  type Reads = { calls: number; found: number; blockMs: number[] };
  type Timed = Reads & { platformChecks: number; cpuMs: number | null };
  const timed = async (route: string): Promise<Timed> => {
    const before = platformChecks;
    const cpuBefore = host.cpuMs();
    const result = await host.call<Reads>(route);
    const cpuAfter = host.cpuMs();
    if (result.found !== result.calls)
      throw new Error(`auth.user() found the user in ${result.found} of ${result.calls} calls (${route})`);
    const cpuMs = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
    return { ...result, platformChecks: platformChecks - before, cpuMs };
  };
  const CALLS = 5000;
  const TRIALS = 7;
  const hotTrials: Timed[] = [];
  const cpuPerCallUs: number[] = [];
  let first: Timed;
  try {
    progress("warm-up");
    await timed("/bench/auth-user?calls=500&block=100");
    progress(`timing auth.user(), ${TRIALS} trials`);
    for (let trial = 0; trial < TRIALS; trial++) {
      // Everything but the timed calls (a new session, its first read): its CPU is subtracted.
      const empty = await timed("/bench/auth-user?calls=0&block=100");
      const hot = await timed(`/bench/auth-user?calls=${CALLS}&block=100`);
      hotTrials.push(hot);
      if (hot.cpuMs !== null && empty.cpuMs !== null) cpuPerCallUs.push(((hot.cpuMs - empty.cpuMs) / CALLS) * 1000);
    }
    progress("timing auth.user() on sessions the isolate has not seen");
    first = await timed("/bench/auth-user-first-look?calls=200&block=20");
  } finally {
    await host.dispose();
  }
  const hotBlocks = hotTrials.flatMap((t) => t.blockMs);

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
      calls: hotTrials.reduce((n, t) => n + t.calls, 0),
      medianMs: quantile(hotBlocks, 0.5),
      p95Ms: quantile(hotBlocks, 0.95),
      blocks: hotBlocks.length,
      // Each trial's first, untimed read asks once.
      platformChecks: hotTrials.reduce((n, t) => n + t.platformChecks - 1, 0),
      cpuMedianUs: cpuPerCallUs.length ? quantile(cpuPerCallUs, 0.5) : null,
      trials: TRIALS,
    },
    firstLook: {
      calls: first.calls,
      medianMs: quantile(first.blockMs, 0.5),
      p95Ms: quantile(first.blockMs, 0.95),
      platformChecks: first.platformChecks,
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
  const { authUser, firstLook, bundles } = outcome;
  const ms = (v: number) => `${(v * 1000).toFixed(1)} µs`;
  return [
    "S. Sign-in (project built by buildProject, run in workerd through Miniflare)",
    `  auth.user() on a signed-in request, the same cookie each time as a browser sends it (read the cookie, its record (decrypted on the isolate's first read), expiry, project and domain checked, and this isolate's answer that the platform still holds the session; a fresh Request per call), ${authUser.calls} calls in ${authUser.trials} trials, platform questions during them: ${authUser.platformChecks}`,
    `    wall per call (blocks of 100 timed inside the worker): median ${ms(authUser.medianMs)}   p95 ${ms(authUser.p95Ms)}`,
    `    workerd CPU per call (median of the trials, minus a request without the timed calls): ${authUser.cpuMedianUs === null ? "n/a" : `${authUser.cpuMedianUs.toFixed(1)} µs`}`,
    `    -> ${authUser.medianMs < 0.05 ? "PASS" : "MISS"} wall under 50 µs; ${authUser.cpuMedianUs === null ? "N/A" : authUser.cpuMedianUs < 50 ? "PASS" : "MISS"} CPU under 50 µs`,
    `  auth.user() on a session the isolate has not seen (once per session per 30 s per isolate: decrypt, then ask the platform, here a stub in Node behind a service binding): ${firstLook.calls} calls, ${firstLook.platformChecks} questions (one more: the untimed read):`,
    `    per call: median ${ms(firstLook.medianMs)}   p95 ${ms(firstLook.p95Ms)}`,
    `  bundle of the same small project: without auth ${bundles.withoutAuthBytes} bytes, with auth ${bundles.withAuthBytes} bytes`,
    `  bytes of src/runtime/auth/** in the bundle: without auth ${bundles.authCodeBytesWithoutAuth}, with auth ${bundles.authCodeBytesWithAuth}` +
      `  -> ${bundles.authCodeBytesWithoutAuth === 0 ? "PASS" : "MISS"} zero bytes of auth code when unused`,
  ].join("\n");
}
