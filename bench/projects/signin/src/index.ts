import { auth } from "platform";
// Bench-only: mint a session cookie the way a sign-in does, to time reading it back.
import { newSessionId, sealSession } from "../../../../src/runtime/auth/sessionSeal.ts";

auth.allow({ sessionMaxAge: 3600 });

interface Env {
  PLATFORM_WORKER_SECRET: string;
  PLATFORM_PROJECT_ID: string;
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname !== "/bench/auth-user") return new Response("not found", { status: 404 });
    const calls = Number(url.searchParams.get("calls") ?? "2000");
    const block = Number(url.searchParams.get("block") ?? "100");
    const now = Math.floor(Date.now() / 1000);
    const cookie = await sealSession(env.PLATFORM_WORKER_SECRET, {
      pid: Number(env.PLATFORM_PROJECT_ID),
      email: "ada@example.com",
      name: "Ada Lovelace",
      iat: now,
      exp: now + 3600,
      sid: newSessionId(),
    });
    const blocks: number[] = [];
    let found = 0;
    for (let done = 0; done < calls; done += block) {
      const began = Date.now();
      for (let i = 0; i < block; i++) {
        // A fresh request each time: auth.user() caches per request, a signed-in page calls it once.
        const signedIn = new Request("http://bench.local/", { headers: { cookie: `platform_session=${cookie}` } });
        if (await auth.user(signedIn)) found++;
      }
      blocks.push((Date.now() - began) / block);
    }
    return Response.json({ calls, found, blockMs: blocks });
  },
};
