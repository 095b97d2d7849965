// Verified webhook triggers through the real `platform dev` (workerd, with `platform webhook list`)
// and `platform dev --node`: a Stripe-signed delivery (signed by the stripe package) starts its run
// once, a redelivery answers that run, and a tampered, wrongly signed or 10-minute-old one answers
// 401 and starts nothing; the console's Webhooks section shows the same deliveries as the CLI.
// Ports of this file: 8940 (workerd), 8941 (Node).
import { writeFileSync } from "node:fs";
import path from "node:path";
import Stripe from "stripe";
import { afterEach, describe, expect, it } from "vitest";
import { shortRunId } from "#src/console/public/console/dom.js";
import {
  type DevProcess,
  getRun,
  initProject,
  launchChromium,
  RUN_ROUTES,
  runCli,
  signedInConsoleUrl,
  startDev,
  useWorkDir,
} from "#test/support/e2e/index.ts";

const work = useWorkDir("platform-e2e-webhooks-");
const SECRET = "whsec_e2e_secret_of_the_project";
const stripe = new Stripe("sk_test_unused");

const running: DevProcess[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((dev) => dev.stop("SIGKILL")));
});

const PROJECT = `import { Router } from "itty-router";
import { webhook, workflow } from "platform";

workflow("fulfil", {
  start: async (ctx) => ({ done: true, result: { fulfilled: ctx.data.event.data.object.id } }),
});
webhook("stripe-orders", { verify: "stripe", secret: "STRIPE_WEBHOOK_SECRET", start: "fulfil" });
${RUN_ROUTES}`;

async function project(name: string): Promise<string> {
  const dir = path.join(work, name);
  await initProject(dir, PROJECT);
  writeFileSync(path.join(dir, ".dev.vars"), `STRIPE_WEBHOOK_SECRET=${SECRET}\n`);
  return dir;
}

async function deliver(
  url: string,
  eventId: string,
  options: { secret?: string; ageS?: number; tamper?: boolean } = {},
) {
  const body = JSON.stringify({ id: eventId, type: "checkout.session.completed", data: { object: { id: "cs_e2e" } } });
  const header = stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? SECRET,
    timestamp: Math.floor(Date.now() / 1000) - (options.ageS ?? 0),
  });
  return fetch(`${url}/__platform/webhooks/stripe-orders`, {
    method: "POST",
    headers: { "content-type": "application/json", "stripe-signature": header },
    body: options.tamper ? body.replace("cs_e2e", "cs_evil") : body,
  });
}

async function runCount(url: string): Promise<number> {
  return ((await (await fetch(`${url}/runs`)).json()) as { runs: unknown[] }).runs.length;
}

async function provesTheContract(url: string): Promise<string> {
  const first = await deliver(url, "evt_e2e_1");
  expect(first.status).toBe(200);
  const answer = (await first.json()) as { runId: string; created: boolean };
  expect(answer.created).toBe(true);
  await expect.poll(async () => (await getRun(url, answer.runId)).status, { timeout: 30_000 }).toBe("completed");
  expect((await getRun(url, answer.runId)).result).toEqual({ fulfilled: "cs_e2e" });

  const again = await deliver(url, "evt_e2e_1");
  expect(await again.json()).toEqual({ delivery: "evt_e2e_1", runId: answer.runId, created: false });

  for (const refused of [{ tamper: true }, { secret: "whsec_wrong" }, { ageS: 600 }]) {
    const response = await deliver(url, "evt_e2e_2", refused);
    expect(response.status, JSON.stringify(refused)).toBe(401);
  }
  expect(await runCount(url)).toBe(1);
  return answer.runId;
}

describe("webhook triggers under platform dev", () => {
  it("workerd: one run per Stripe event, 401 for the rest; platform webhook list shows the URL and the deliveries", async () => {
    const dir = await project("hooks-workerd");
    const dev = await startDev([dir, "--port", "8940"], { readyTimeoutMs: 60_000 });
    running.push(dev);
    const runId = await provesTheContract(dev.url);

    await expect
      .poll(async () => (await runCli(["webhook", "list", "--dir", dir])).stdout, { timeout: 30_000 })
      .toMatch(/refused: stale/);
    const list = await runCli(["webhook", "list", "--dir", dir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^stripe-orders {2}http:\/\/\S+\/__platform\/webhooks\/stripe-orders$/m);
    expect(list.stdout).toContain("verify stripe, secret STRIPE_WEBHOOK_SECRET, starts fulfil");
    expect(list.stdout).toContain(`evt_e2e_1    verified, started run ${runId.slice(0, 8)}`);
    expect(list.stdout).toContain(`evt_e2e_1    verified, run ${runId.slice(0, 8)} (already started: redelivery)`);
    expect(list.stdout).toMatch(/refused: bad_signature/);

    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(signedInConsoleUrl(dir));
      const section = page.locator("#webhooks");
      await section.getByRole("heading", { name: "stripe-orders" }).waitFor();
      await expect(section.locator("code").first().textContent()).resolves.toMatch(
        /^http:\/\/\S+\/__platform\/webhooks\/stripe-orders$/,
      );
      expect(await section.getByText("verify stripe, starts fulfil").count()).toBe(1);
      expect(await section.textContent()).not.toContain("STRIPE_WEBHOOK_SECRET");
      const rows = await section
        .locator("tbody tr")
        .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].slice(1).map((td) => td.textContent)));
      expect(rows).toContainEqual(["evt_e2e_1", "verified, started the run", shortRunId(runId)]);
      expect(rows).toContainEqual(["evt_e2e_1", "verified, run already started (redelivery)", shortRunId(runId)]);
      expect(rows).toContainEqual(["-", "refused: bad_signature", ""]);
      expect(rows).toContainEqual(["-", "refused: stale", ""]);
      await section
        .getByRole("link", { name: shortRunId(runId) })
        .first()
        .click();
      await page.getByRole("heading", { name: "Workflow run" }).waitFor();
      expect(decodeURIComponent(page.url())).toContain(`/runs/${runId}`);
    } finally {
      await browser.close();
    }
  });

  it("--node: the same", async () => {
    const dir = await project("hooks-node");
    const dev = await startDev([dir, "--node", "--port", "8941"], { readyTimeoutMs: 30_000 });
    running.push(dev);
    await provesTheContract(dev.url);
  });
});
