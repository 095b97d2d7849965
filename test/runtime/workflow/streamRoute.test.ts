import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMemoryWorkflowBackend, type MemoryWorkflowBackend } from "#src/engine/backends/memoryBackend.ts";
import {
  getWorkflowDefinition,
  installedWorkflowBackend,
  installWorkflowBackend,
  resetWorkflowsForTests,
  setStreamLinkIssuer,
  workflow,
} from "#src/engine/api/workflowApi.ts";
import { createStreamLinkIssuer } from "#src/runtime/workflow/streamLinks.ts";
import { serveRunStream } from "#src/runtime/workflow/streamRoute.ts";

const SECRET = "5".repeat(64);
const HOUR = 3_600_000;
let now = 1_700_000_000_000;
let backend: MemoryWorkflowBackend;
let release: () => void = () => {};

const deps = { backend: installedWorkflowBackend, secret: () => SECRET, now: () => now };
const get = (url: string, headers: HeadersInit = {}) =>
  serveRunStream(new Request(new URL(url, "http://project.test"), { headers }), deps) as Promise<Response>;

/** The SSE events of a body: `[id, event, data]` each. */
function eventsOf(text: string): [number, string, unknown][] {
  return text
    .split("\n\n")
    .filter((block) => block.startsWith("id: "))
    .map((block) => {
      const [id, event, data] = block.split("\n").map((line) => line.slice(line.indexOf(": ") + 2));
      return [Number(id), event!, JSON.parse(data!)];
    });
}

beforeEach(() => {
  resetWorkflowsForTests();
  workflow("progress", {
    start: async (ctx) => {
      for (const pct of [0, 50, 100]) ctx.publish("progress", { pct });
      return { done: true, result: "ok" };
    },
  });
  workflow("held", {
    start: async (ctx) => {
      ctx.publish("progress", "first");
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      ctx.publish("progress", "second");
      return { done: true, result: null };
    },
  });
  backend = createMemoryWorkflowBackend({ definitions: getWorkflowDefinition });
  installWorkflowBackend(backend);
  setStreamLinkIssuer(
    createStreamLinkIssuer(
      () => ({ PLATFORM_WORKER_SECRET: SECRET }),
      () => now,
    ),
  );
});

afterEach(async () => {
  release();
  await backend.close();
  setStreamLinkIssuer(null);
  resetWorkflowsForTests();
});

async function endedRun() {
  const run = await workflow.start("progress", {});
  await run.result();
  return run;
}

describe("GET /__platform/streams/<run>/<token>", () => {
  it("serves the run's stream as text/event-stream, id = offset, event = topic, data = JSON, and closes after its last message", async () => {
    const run = await endedRun();
    const response = await get(await workflow.streamURL(run.id));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(eventsOf(await response.text())).toEqual([
      [0, "run", { type: "step_started", step: "start" }],
      [1, "progress", { pct: 0 }],
      [2, "progress", { pct: 50 }],
      [3, "progress", { pct: 100 }],
      [4, "run", { type: "step_completed", step: "start" }],
      [5, "run", { type: "ended", status: "completed" }],
    ]);
  });

  it("resumes after Last-Event-ID with no gap and no duplicate", async () => {
    const run = await endedRun();
    const url = await workflow.streamURL(run.id);
    const all = eventsOf(await (await get(url)).text());
    for (const last of [0, 2, 4, 5]) {
      const resumed = eventsOf(await (await get(url, { "last-event-id": String(last) })).text());
      expect(resumed).toEqual(all.filter(([id]) => id > last));
    }
  });

  it("serves only the topics its URL was made for", async () => {
    const run = await endedRun();
    const events = eventsOf(await (await get(await workflow.streamURL(run.id, { topics: ["progress"] }))).text());
    expect(events.map(([id, event]) => [id, event])).toEqual([
      [1, "progress"],
      [2, "progress"],
      [3, "progress"],
    ]);
  });

  it("sends a message published mid-step while that step still runs", async () => {
    const run = await workflow.start("held", {});
    const response = await get(await workflow.streamURL(run.id, { topics: ["progress"] }));
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    while (!text.includes('"first"')) text += (await reader.read()).value ?? "";
    expect(eventsOf(text)).toEqual([[1, "progress", "first"]]);
    expect((await workflow.get(run.id))?.status).toBe("running");
    release();
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) text += chunk.value;
    expect(eventsOf(text).map(([, , data]) => data)).toEqual(["first", "second"]);
  });

  it.each([
    [
      "altered in one character of its token",
      (url: string) => url.slice(0, -5) + (url.at(-5) === "A" ? "B" : "A") + url.slice(-4),
      0,
    ],
    [
      "altered in its payload",
      (url: string) => url.replace(/\/s1\.(.)/, (_m, c: string) => `/s1.${c === "e" ? "f" : "e"}`),
      0,
    ],
    ["expired", (url: string) => url, HOUR],
    ["used a day later (a replay)", (url: string) => url, 24 * HOUR],
    [
      "pointed at another run",
      (url: string, other: string) => url.replace(/streams\/[^/]+\//, `streams/${encodeURIComponent(other)}/`),
      0,
    ],
    [
      "pointed at a run that does not exist",
      (url: string) => url.replace(/streams\/[^/]+\//, "streams/no-such-run/"),
      0,
    ],
  ])("a URL %s answers 401 with the same message, whether or not the run exists", async (_case, change, later) => {
    const run = await endedRun();
    const other = await endedRun();
    const url = change(await workflow.streamURL(run.id), other.id);
    now += later;
    const response = await get(url);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: {
        code: "unauthorized",
        message:
          "This stream URL is not valid: it was altered, has expired or is for another run. Ask the page for a new one.",
      },
    });
  });

  it("a valid URL of a run deleted since answers the same 401", async () => {
    const run = await endedRun();
    const url = await workflow.streamURL(run.id);
    backend.store.forgetRuns([run.id]);
    const response = await get(url);
    expect(response.status).toBe(401);
  });

  it.each(["abc", "-1", "1.5", "9".repeat(16)])("Last-Event-ID %s answers 400", async (lastEventId) => {
    const run = await endedRun();
    const response = await get(await workflow.streamURL(run.id), { "last-event-id": lastEventId });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "invalid_input" } });
  });

  it("answers GET only", async () => {
    const run = await endedRun();
    const url = new URL(await workflow.streamURL(run.id), "http://project.test");
    const response = (await serveRunStream(new Request(url, { method: "POST" }), deps)) as Response;
    expect(response.status).toBe(404);
  });

  it("passes on any other path", async () => {
    await expect(serveRunStream(new Request("http://project.test/__platform/streamsx"), deps)).resolves.toBeNull();
    await expect(serveRunStream(new Request("http://project.test/app"), deps)).resolves.toBeNull();
  });
});

describe("workflow.streamURL", () => {
  it("is a path under /__platform/streams/ naming the run, valid for an hour by default and 24 hours at most", async () => {
    const run = await endedRun();
    const url = await workflow.streamURL(run.id);
    expect(url).toMatch(new RegExp(`/__platform/streams/${run.id}/s1\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]{43}$`));
    now += HOUR - 1;
    expect((await get(url)).status).toBe(200);
    const day = await workflow.streamURL(run.id, { ttlMS: 24 * HOUR });
    now += 24 * HOUR - 1;
    expect((await get(day)).status).toBe(200);
  });

  it.each([
    ["ttlMS 0", { ttlMS: 0 }, "invalid_input"],
    ["ttlMS over 24 hours", { ttlMS: 24 * HOUR + 1 }, "invalid_input"],
    ["a fractional ttlMS", { ttlMS: 1.5 }, "invalid_input"],
    ["an unknown option", { ttl: 5 }, "invalid_input"],
    ["an empty topics list", { topics: [] }, "invalid_input"],
    ["a bad topic", { topics: ["Progress"] }, "invalid_input"],
  ])("refuses %s", async (_case, options, code) => {
    const run = await endedRun();
    await expect(workflow.streamURL(run.id, options as never)).rejects.toMatchObject({ code });
  });

  it("refuses an unknown run with not_found", async () => {
    await expect(workflow.streamURL("no-such-run")).rejects.toMatchObject({ code: "not_found" });
  });
});
