import { auth } from "platform";
// Bench-only: mint session cookies the way a sign-in does, to time reading them back.
import { newSessionId, sealSession } from "../../../../src/runtime/auth/sessionSeal.ts";

auth.allow({ sessionMaxAge: 3600 });

interface Env {
  PLATFORM_WORKER_SECRET: string;
  PLATFORM_PROJECT_ID: string;
}

function cookieFor(env: Env): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return sealSession(env.PLATFORM_WORKER_SECRET, {
    pid: Number(env.PLATFORM_PROJECT_ID),
    email: "ada@example.com",
    name: "Ada Lovelace",
    iat: now,
    exp: now + 3600,
    sid: newSessionId(),
  });
}

const read = (cookie: string) =>
  // A fresh request each time: auth.user() caches per request, a signed-in page calls it once.
  auth.user(new Request("http://bench.local/", { headers: { cookie: `platform_session=${cookie}` } }));

/**
 * `calls` auth.user() reads in blocks of `block`, each on a fresh Request, after one untimed
 * read of the session (the isolate's first look, which asks the platform); `fresh`: a new
 * session for every timed call instead, so each asks. `calls=0` does the untimed part only
 * (the bench subtracts its CPU).
 */
async function timeReads(env: Env, calls: number, block: number, fresh: boolean) {
  const one = await cookieFor(env);
  if (!(await read(one))) throw new Error("the session reads as nobody");
  const cookies = fresh ? await Promise.all(Array.from({ length: calls }, () => cookieFor(env))) : [];
  const blocks: number[] = [];
  let found = 0;
  for (let done = 0; done < calls; done += block) {
    const began = Date.now();
    for (let i = 0; i < block; i++) if (await read(fresh ? cookies[done + i]! : one)) found++;
    blocks.push((Date.now() - began) / block);
  }
  return { calls, found, blockMs: blocks };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const calls = Number(url.searchParams.get("calls") ?? "2000");
    const block = Number(url.searchParams.get("block") ?? "100");
    // One session read again and again: the isolate asked the platform about it once.
    if (url.pathname === "/bench/auth-user") return Response.json(await timeReads(env, calls, block, false));
    // A new session every call: each read asks the platform (the first look of an isolate at a session).
    if (url.pathname === "/bench/auth-user-first-look") return Response.json(await timeReads(env, calls, block, true));
    return new Response("not found", { status: 404 });
  },
};
