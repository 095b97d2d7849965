// Live runs under `platform dev` (workerd) and `--node`: a page of the project opens workflow.streamURL in
// Chromium (EventSource) and shows a step's first message while that step is still running (it sleeps 3 s
// after publishing); a reconnect with Last-Event-ID: 2 gets exactly the messages after offset 2; a URL
// altered in one character, expired or pointed at another run answers 401, one message for all;
// `platform workflow watch` prints a run's messages as they come and exits 0 when it completes, 1 when it fails.
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  devBackends,
  getRun,
  launchChromium,
  PLATFORM_BIN,
  removeWorkDir,
  useDevProject,
  waitForRuns,
} from "#test/support/e2e/index.ts";

// Ports of this file: 8936 (workerd), 8937 (Node).
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-live-"));

const PROJECT = `import { Router } from "itty-router";
import { NonRetryableError, workflow } from "platform";

workflow("report", {
  start: async (ctx) => {
    ctx.publish("progress", { pct: 10 });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    ctx.publish("progress", { pct: 90 });
    return { step: "finish" };
  },
  finish: async (ctx) => {
    ctx.publish("progress", { pct: 100 });
    return { done: true, result: "ok" };
  },
});
workflow("broken", {
  start: async (ctx) => {
    ctx.publish("progress", { pct: 5 });
    throw new NonRetryableError("the printer is on fire");
  },
});

const PAGE = \`<!doctype html><title>Report</title><ol id="log"></ol><script>
const source = new EventSource(new URLSearchParams(location.search).get("stream"));
for (const topic of ["progress", "run"])
  source.addEventListener(topic, (event) => {
    const item = document.createElement("li");
    item.textContent = event.lastEventId + " " + topic + " " + event.data;
    document.getElementById("log").append(item);
    if (topic === "run" && JSON.parse(event.data).type === "ended") source.close();
  });
</script>\`;

const router = Router();
router.post("/runs/:name", async ({ params }) => Response.json({ runId: (await workflow.start(params.name, {})).id }, { status: 201 }));
router.get("/runs/:runId", async ({ params }) => Response.json(await workflow.get(params.runId)));
router.post("/links/:runId", async (request) => {
  const options = await request.json();
  return Response.json({ url: await workflow.streamURL(request.params.runId, options) });
});
router.get("/page", () => new Response(PAGE, { headers: { "content-type": "text/html" } }));
export default router;
`;

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

const REFUSED = {
  error: {
    code: "unauthorized",
    message:
      "This stream URL is not valid: it was altered, has expired or is for another run. Ask the page for a new one.",
  },
};

let browser: Browser;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  removeWorkDir(work);
});

describe.each(devBackends(8936))("live runs: %s", (name, flags, port) => {
  const dir = path.join(work, name.includes("node") ? "node" : "workerd");
  const project = useDevProject(dir, PROJECT, flags, port);

  const start = async (workflowName: string) => {
    const response = await fetch(`${project.url}/runs/${workflowName}`, { method: "POST" });
    expect(response.status).toBe(201);
    return ((await response.json()) as { runId: string }).runId;
  };
  const streamURL = async (runId: string, options: object = {}) => {
    const response = await fetch(`${project.url}/links/${encodeURIComponent(runId)}`, {
      method: "POST",
      body: JSON.stringify(options),
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { url: string }).url;
  };

  it("a page shows a step's first message while that step still runs, then the rest, and the stream ends", async () => {
    const runId = await start("report");
    const url = await streamURL(runId);
    expect(url.startsWith(`${project.url}/__platform/streams/`)).toBe(true);
    const page = await browser.newPage();
    try {
      await page.goto(`${project.url}/page?stream=${encodeURIComponent(url)}`);
      await page.locator("#log li", { hasText: '"pct":10' }).waitFor({ timeout: 20_000 });
      // The step sleeps 3 s after publishing: it has not ended yet.
      const during = await getRun(project.url, runId);
      expect(during.status).toBe("running");
      expect(during.events.at(-1)?.type).toBe("step_started");
      await page.locator("#log li", { hasText: '"type":"ended"' }).waitFor({ timeout: 20_000 });
      const lines = await page.locator("#log li").allTextContents();
      expect(lines).toEqual([
        '0 run {"type":"step_started","step":"start"}',
        '1 progress {"pct":10}',
        '2 progress {"pct":90}',
        '3 run {"type":"step_completed","step":"start","next":"finish"}',
        '4 run {"type":"step_started","step":"finish"}',
        '5 progress {"pct":100}',
        '6 run {"type":"step_completed","step":"finish"}',
        '7 run {"type":"ended","status":"completed"}',
      ]);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("a reconnect with Last-Event-ID: 2 gets exactly the messages after offset 2", async () => {
    const runId = await start("report");
    const url = await streamURL(runId);
    const all = eventsOf(await (await fetch(url)).text());
    expect(all.map(([id]) => id)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    const resumed = await fetch(url, { headers: { "Last-Event-ID": "2" } });
    expect(resumed.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(eventsOf(await resumed.text())).toEqual(all.slice(3));
  }, 60_000);

  it("a URL altered in one character, expired, or pointed at another run answers 401, one message for all", async () => {
    const [runId, otherId] = [await start("broken"), await start("broken")];
    await waitForRuns(project.url, [runId, otherId]);
    const url = await streamURL(runId);
    expect((await fetch(url)).status).toBe(200);
    const last = url.at(-1) === "A" ? "B" : "A";
    const refused = [
      url.slice(0, -1) + last,
      await streamURL(runId, { ttlMS: 1 }),
      url.replace(encodeURIComponent(runId), encodeURIComponent(otherId)),
    ];
    for (const bad of refused) {
      const response = await fetch(bad);
      expect(response.status).toBe(401);
      expect(await response.json()).toEqual(REFUSED);
    }
  }, 60_000);

  it("platform workflow watch prints the messages as they come and exits 0 when the run completes, 1 when it fails", async () => {
    const runId = await start("report");
    const watch = spawn(
      process.execPath,
      [PLATFORM_BIN, "workflow", "watch", runId, "--dir", dir, "--topic", "progress"],
      {
        env: { ...process.env, NO_COLOR: "1" },
      },
    );
    let out = "";
    watch.stdout.on("data", (chunk) => {
      out += chunk;
    });
    const code = await new Promise<number | null>((resolve) => watch.on("exit", resolve));
    expect(out).toBe(
      `#1 progress {"pct":10}\n#2 progress {"pct":90}\n#5 progress {"pct":100}\nRun ${runId} completed.\n`,
    );
    expect(code).toBe(0);
    const broken = await start("broken");
    const failed = await project.workflowCli("watch", broken);
    expect(failed.stdout).toBe(
      `#0 run {"type":"step_started","step":"start"}\n#1 progress {"pct":5}\n#2 run {"type":"step_failed","step":"start","reason":"the printer is on fire","retryable":false}\n#3 run {"type":"ended","status":"failed"}\nRun ${broken} failed: the printer is on fire.\n`,
    );
    expect(failed.code).toBe(1);
    expect((await project.workflowCli("watch", broken, "--from", "x")).code).toBe(2);
  }, 60_000);
});
