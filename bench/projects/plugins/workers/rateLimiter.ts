// Bench worker: binds the platform's RateLimiter class (bundled from
// src/objects/RateLimiter.ts) and fires N concurrent take() calls at one
// project's actor, the way takeRateLimit reaches it.
import { RateLimiter } from "../../../../src/objects/RateLimiter.ts";

export { RateLimiter };

interface Env {
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const n = Math.max(1, Math.min(10_000, Number(url.searchParams.get("n") ?? "100")));
    const project = url.searchParams.get("project") ?? "bench";
    const stub = env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(`project:${project}`));
    const began = Date.now();
    const decisions = await Promise.all(Array.from({ length: n }, () => stub.take("actions", 3, 60_000)));
    const insideMs = Date.now() - began;
    const allowed = decisions.filter((d) => d.allowed).length;
    const retryAfter = decisions.filter((d) => !d.allowed).map((d) => d.retryAfterSeconds);
    return Response.json({
      n,
      allowed,
      refused: n - allowed,
      insideMs,
      retryAfterMin: retryAfter.length ? Math.min(...retryAfter) : null,
      retryAfterMax: retryAfter.length ? Math.max(...retryAfter) : null,
    });
  },
};
