import { mkdtempSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { artifactPath, launchChromium, removeWorkDir } from "#test/support/e2e/index.ts";
import { devSession, signedInConsoleUrl, startDev, type DevProcess } from "#test/support/e2e/index.ts";
import { initProject, RETRIED_TWO_STEP_RUN, RUN_ROUTES, startRuns, waitForRuns } from "#test/support/e2e/index.ts";

// Port of this file: 8898.
const work = mkdtempSync(path.join(tmpdir(), "platform-e2e-console-"));
const dir = path.join(work, "shop");

// "charge" fails on its first attempt and is retried after a visible backoff;
// "pack" takes a while, so the run is still going when the console opens it.
const SHOP_PROJECT = `import { Router } from "itty-router";
import { NonRetryableError, workflow } from "platform";

workflow(
  "order",
  {
    start: async (ctx) => {
      if (ctx.attempt === 1) throw new Error("card declined, try again");
      return { step: "pack" };
    },
    pack: async (ctx) => {
      await new Promise((resolve) => setTimeout(resolve, 2500));
      return { done: true, result: { packed: ctx.data.item } };
    },
  },
  { maxAttempts: 3, backoff: { initialMS: 1200, maxMS: 1200, factor: 1, jitter: 0 } },
);
workflow("greet", { start: async (ctx) => ({ done: true, result: "hello " + ctx.data.name }) });
workflow("doomed", {
  start: async () => {
    throw new NonRetryableError("the address does not exist");
  },
});
${RUN_ROUTES}`;

let dev: DevProcess;
let consoleUrl: string;
let apiUrl: string;
let browser: Browser;

beforeAll(async () => {
  await initProject(dir, SHOP_PROJECT);
  dev = await startDev([dir, "--port", "8898"]);
  apiUrl = devSession(dir).apiUrl;
  consoleUrl = signedInConsoleUrl(dir);
  // Runs to filter: two greets (completed), one doomed (failed).
  await waitForRuns(dev.url, [
    ...(await startRuns(dev.url, "greet", 2, { name: "Ada" })),
    ...(await startRuns(dev.url, "doomed")),
  ]);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  removeWorkDir(work);
});

async function openConsole(options: { bypassCSP?: boolean } = {}): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, ...options });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  await page.goto(consoleUrl);
  await page.getByRole("heading", { name: "Project shop" }).waitFor();
  return { page, errors };
}

/** axe-core's serious and critical findings on the page (axe loaded into it first). */
async function seriousAxeViolations(page: Page): Promise<string[]> {
  return page.evaluate(async () => {
    const result = await (
      window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; help: string }[] }> } }
    ).axe.run();
    return result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id}: ${v.help}`);
  });
}

/** The runs the list shows: [workflow, status] per row, top to bottom (after the select box and the run link). */
async function listedRuns(page: Page): Promise<string[][]> {
  return page
    .locator("#runs tbody tr")
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll("td")].slice(2, 4).map((td) => td.textContent ?? "")),
    );
}

describe("the console on platform dev", () => {
  it("starts a workflow from the page and shows its timeline live: two attempts of the failing step, the retry wait, then completion", async () => {
    const { page, errors } = await openConsole();
    // The link signed the tab in and then dropped the token from the address bar.
    expect(new URL(page.url()).hash).toBe("#/p/shop");
    await page.evaluate(() => ((window as unknown as { marker: string }).marker = "same page"));

    await page.locator("#start-workflow").getByLabel("Workflow", { exact: true }).selectOption("order");
    await page.getByLabel("Data (JSON)").fill('{ "item": "teapot" }');
    await page.getByRole("button", { name: "Start" }).click();
    await page.waitForURL(/#\/p\/shop\/runs\//);
    await page.getByRole("heading", { name: "Workflow run: order" }).waitFor();

    // While it runs: the first attempt failed with its reason, and the page says it is live.
    const first = page.locator('li.attempt[data-step="start"][data-attempt="1"]');
    await first.and(page.locator('[data-outcome="failed"]')).waitFor({ timeout: 15_000 });
    expect(await first.locator(".detail").textContent()).toMatch(
      /^failed after \d+ ms: card declined, try again · (waiting to retry|retried after)/,
    );
    await page.locator('li.final[data-outcome="running"]').waitFor({ timeout: 15_000 });
    expect(await page.getByText("Live: updating every second.").count()).toBe(1);

    // Without a reload: the retry, the next step, and the completion.
    await page.locator('li.final[data-outcome="completed"]').waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as { marker?: string }).marker)).toBe("same page");
    const rows = await page
      .locator("li.attempt")
      .evaluateAll((items) =>
        items.map((li) => [
          li.getAttribute("data-step"),
          li.getAttribute("data-attempt"),
          li.getAttribute("data-outcome"),
        ]),
      );
    expect(rows).toEqual([
      ["start", "1", "failed"],
      ["start", "2", "completed"],
      ["pack", "1", "completed"],
    ]);
    const wait = await first.locator(".detail").textContent();
    const waited = Number(wait!.match(/retried after ([\d.]+) (ms|s)/)![1]) * (wait!.includes(" s") ? 1000 : 1);
    expect(waited).toBeGreaterThanOrEqual(1100);
    expect(await first.locator(".wait").count()).toBe(1);
    expect(await page.locator("#run-result").textContent()).toBe(JSON.stringify({ packed: "teapot" }, null, 2));
    const raw = (await page.locator("#raw-events").textContent())!
      .split("\n")
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(raw).toEqual(RETRIED_TWO_STEP_RUN);
    await page.screenshot({ path: artifactPath("console-run-timeline.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("lists runs newest first and filters them by workflow name and by status", async () => {
    const { page } = await openConsole();
    await page.locator("#runs tbody tr").first().waitFor();
    const all = await listedRuns(page);
    expect(all.map(([name]) => name)).toEqual(["order", "doomed", "greet", "greet"]);

    const filters = page.locator("#run-filters");
    await filters.getByLabel("Workflow", { exact: true }).selectOption("greet");
    await filters.getByRole("button", { name: "Show runs" }).click();
    await expect
      .poll(() => listedRuns(page))
      .toEqual([
        ["greet", "completed"],
        ["greet", "completed"],
      ]);

    await filters.getByLabel("Workflow", { exact: true }).selectOption("");
    await filters.getByLabel("Status").selectOption("failed");
    await filters.getByRole("button", { name: "Show runs" }).click();
    await expect.poll(() => listedRuns(page)).toEqual([["doomed", "failed"]]);
    await page.locator("#runs tbody tr a").click();
    await page.locator("#run-error").waitFor();
    expect(await page.locator("#run-error").textContent()).toBe("Failed: the address does not exist");
    expect(await page.locator('li.attempt[data-step="start"] .detail').textContent()).toMatch(
      /: the address does not exist · not retried$/,
    );
    await page.close();
  });

  it("pages the list: 20 runs, then the older ones on request, newest first throughout", async () => {
    await waitForRuns(dev.url, await startRuns(dev.url, "greet", 20, { name: "Bo" }));
    const { page } = await openConsole();
    const rows = page.locator("#runs tbody tr");
    await expect.poll(() => rows.count()).toBe(20);
    const older = page.getByRole("button", { name: "Older runs" });
    expect(await older.isVisible()).toBe(true);
    await older.click();
    await expect.poll(() => rows.count()).toBe(24);
    expect(await older.isVisible()).toBe(false);
    expect(await page.locator("#runs-heading ~ p[role=status]").textContent()).toBe("24 runs shown, newest first.");
    const ids = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-run-id")));
    expect(new Set(ids).size).toBe(24);
    expect((await listedRuns(page)).slice(-4).map(([name]) => name)).toEqual(["order", "doomed", "greet", "greet"]);
    await page.close();
  });

  it("runs the recovery sweep now and shows what it did", async () => {
    const { page } = await openConsole();
    await page.getByRole("button", { name: "Run recovery now" }).click();
    await expect
      .poll(() => page.locator("#crons-heading ~ .result").textContent())
      .toMatch(/^__workflow-recovery: Re-enqueued \d+ workflow\(s\)$/);
    await page.close();
  });

  it("is keyboard navigable with labelled controls and no serious accessibility violations (axe-core)", async () => {
    // axe-core is injected as an inline script, which the console's CSP (rightly) refuses.
    const { page } = await openConsole({ bypassCSP: true });
    await page.locator("#runs tbody tr").first().waitFor();
    // Opening a view moves focus to its heading; the keyboard alone reaches a run from there.
    const focused = () =>
      page.evaluate(() => ({
        tag: document.activeElement?.tagName,
        text: document.activeElement?.textContent?.trim(),
      }));
    expect(await focused()).toEqual({ tag: "H2", text: "Project shop" });
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toEqual({ tag: "A", text: "shop" });
    await page.keyboard.press("Tab");
    expect(await focused()).toEqual({ tag: "BUTTON", text: "Run recovery now" });
    for (
      let i = 0;
      i < 60 && !(await page.evaluate(() => document.activeElement?.closest("#runs tbody a") !== null));
      i++
    )
      await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: /^Workflow run: / }).waitFor();
    expect((await focused()).tag).toBe("H2");
    await page.keyboard.press("Shift+Tab");
    expect(await focused()).toEqual({ tag: "A", text: "← Project shop" });
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Project shop" }).waitFor();
    await page.locator("#runs tbody tr").first().waitFor();
    // Every form control has an accessible name.
    const unnamed = await page
      .locator("main input, main select, main textarea, main button")
      .evaluateAll((controls) =>
        controls
          .filter(
            (c) => !(c as HTMLInputElement).labels?.length && !c.textContent?.trim() && !c.getAttribute("aria-label"),
          )
          .map((c) => c.outerHTML),
      );
    expect(unnamed).toEqual([]);
    const require = createRequire(import.meta.url);
    await page.addScriptTag({ path: require.resolve("axe-core/axe.min.js") });
    const violations = await seriousAxeViolations(page);
    expect(violations).toEqual([]);
    // A run page too (timeline, result, raw events).
    await page.locator("#runs tbody tr a").first().click();
    await page.locator("li.final").waitFor();
    const runViolations = await seriousAxeViolations(page);
    expect(runViolations).toEqual([]);
    await page.close();
  });

  it("has an origin no project is served on: the project's port is another, and the console's answers no project path", async () => {
    expect(new URL(apiUrl).origin).not.toBe(new URL(dev.url).origin);
    for (const pathname of ["/shop/", "/shop/api/auth/signin", "/evil/"]) {
      const response = await fetch(apiUrl + pathname);
      expect({ pathname, status: response.status }).toEqual({ pathname, status: 404 });
      expect(await response.json()).toEqual({
        error: { code: "not_found", message: `No route for GET ${pathname}.` },
      });
    }
  });

  // The review's attack: `/console/#token=<another account's token>` silently signed the console in as that account.
  it("asks before a #token= link replaces the account a console is signed in as, and replaces nothing unless told", async () => {
    const { adminToken } = JSON.parse(readFileSync(path.join(dir, ".platform/credentials.json"), "utf8")) as {
      adminToken: string;
    };
    const issued = await fetch(`${apiUrl}/admin/users`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
      body: JSON.stringify({ email: "mallory@example.com" }),
    });
    const mallory = ((await issued.json()) as { token: string }).token;
    const link = `${apiUrl}/console/#token=${mallory}`;
    const { page } = await openConsole();
    const signedInAs = page.locator("#signed-in-as");
    expect(await signedInAs.textContent()).toBe("Signed in as dev@platform.local");
    const token = () => page.evaluate(() => sessionStorage.getItem("platform-console-token"));
    const own = await token();

    // Opened in the signed-in tab (a hash change, then a fresh load): the question, and no switch until answered.
    const freshLoad = async () => {
      await page.goto("about:blank");
      return page.goto(link);
    };
    for (const open of [() => page.goto(link), freshLoad]) {
      await open();
      const question = page.getByRole("alertdialog", { name: "Sign in as another account?" });
      await question.waitFor();
      expect(await question.locator("#switch-text").textContent()).toBe(
        "This link signs the console in as mallory@example.com. You are signed in as dev@platform.local.",
      );
      expect(new URL(page.url()).hash).toBe("#/");
      expect(await token()).toBe(own);
      expect(await page.locator("#main").isHidden()).toBe(true);
      await page.getByRole("button", { name: "Stay signed in as dev@platform.local" }).click();
      await page.getByRole("heading", { name: "Project shop" }).waitFor();
      expect(await signedInAs.textContent()).toBe("Signed in as dev@platform.local");
      expect(await token()).toBe(own);
    }

    // A link whose token the API does not take changes nothing either.
    await page.goto(`${apiUrl}/console/#token=plt_${"x".repeat(43)}`);
    await expect
      .poll(() => page.locator("#announcer").textContent())
      .toBe("The link's sign-in is not valid: still signed in as dev@platform.local.");
    expect(await token()).toBe(own);

    // Only the person's own choice switches.
    await page.goto(link);
    await page.getByRole("button", { name: "Switch to mallory@example.com" }).click();
    await expect.poll(() => signedInAs.textContent()).toBe("Signed in as mallory@example.com");
    expect(await token()).toBe(mallory);
    await page.getByText("No projects yet").waitFor();
    await page.close();
  });

  it("asks for a CLI token without one, refuses a wrong one, and its data endpoints answer 401 without a valid token", async () => {
    const page = await browser.newPage();
    const served = await page.goto(`${apiUrl}/console/`);
    // Static files with a strict policy: no inline script, nothing from elsewhere, never framed.
    expect(served!.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(served!.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await page.locator("#main").isHidden()).toBe(true);
    await page.getByLabel("CLI token").fill("plt_" + "x".repeat(43));
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toBe("Invalid CLI token.");
    await page.getByLabel("CLI token").fill("not a token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await expect.poll(() => page.locator("#sign-in-error").textContent()).toMatch(/^That is not a CLI token/);
    await page.close();

    const slug = "shop";
    for (const [method, pathname] of [
      ["GET", "/projects"],
      ["GET", `/projects/${slug}`],
      ["GET", `/projects/${slug}/plugins`],
      ["GET", `/projects/${slug}/workflows`],
      ["GET", `/projects/${slug}/workflows/x.y`],
      ["POST", `/projects/${slug}/workflows`],
      ["POST", `/projects/${slug}/crons/__workflow-recovery/run`],
      ["POST", `/projects/${slug}/plugins/chatserver/test-events`],
    ] as const) {
      for (const authorization of [undefined, "Bearer plt_" + "x".repeat(43)]) {
        const response = await fetch(apiUrl + pathname, { method, headers: authorization ? { authorization } : {} });
        expect({ method, pathname, authorization, status: response.status }).toEqual({
          method,
          pathname,
          authorization,
          status: 401,
        });
      }
    }
  });
  // Issue 22: run operations in the console. Last, as it adds runs the counts above do not expect.
  it("keeps filters in the address, confirms a bulk rerun with its count, reruns from a step and links both runs", async () => {
    const { page, errors } = await openConsole();
    const filters = page.locator("#run-filters");
    await filters.getByLabel("Status").selectOption("failed");
    await filters.getByLabel("Step").fill("start");
    await filters.getByRole("button", { name: "Show runs" }).click();
    await expect.poll(() => listedRuns(page)).toEqual([["doomed", "failed"]]);
    expect(new URL(page.url()).hash).toBe("#/p/shop?status=failed&step=start");
    // The address alone brings the filtered list back.
    await page.reload();
    await page.getByRole("heading", { name: "Project shop" }).waitFor();
    expect(await filters.getByLabel("Status").inputValue()).toBe("failed");
    expect(await filters.getByLabel("Step").inputValue()).toBe("start");
    await expect.poll(() => listedRuns(page)).toEqual([["doomed", "failed"]]);
    const [original] = await page.locator("#runs tbody tr").evaluateAll((trs) => trs.map((tr) => tr.dataset.runId));

    // All that match: the platform counts them first, and nothing happens before the confirmation.
    await page.getByLabel("all runs that match the filters").check();
    await page.getByRole("button", { name: "Rerun runs…" }).click();
    const question = page.getByRole("alertdialog");
    await expect.poll(() => question.textContent()).toContain("Rerun 1 run (all that match the filters)?");
    expect(await listedRuns(page)).toEqual([["doomed", "failed"]]);
    await question.getByRole("button", { name: "Rerun 1 run" }).click();
    await expect.poll(() => page.locator("#bulk-outcome").textContent()).toBe("1 run(s) matched; 1 rerun.");

    // Rerun from here, on the original's timeline: the new run links back, and the original lists its reruns.
    await page.goto(`${new URL(page.url()).origin}/console/#/p/shop/runs/${encodeURIComponent(original!)}`);
    await page.locator("#run-error").waitFor();
    await page.locator('button[data-rerun-from="start"]').click();
    await page.locator("#rerun-of").waitFor();
    expect(await page.locator("#rerun-of").getAttribute("href")).toBe(`#/p/shop/runs/${encodeURIComponent(original!)}`);
    expect(await page.locator("main .meta").first().textContent()).toContain("rerun of");
    await page.locator("#rerun-of").click();
    await expect.poll(() => page.locator("#reruns a").count()).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  });
});
