import { cpSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, expect, it } from "vitest";
import { artifactPath, launchChromium, removeWorkDir } from "#test/support/e2e/index.ts";
import { REPO, startDev } from "#test/support/e2e/index.ts";

const work = mkdtempSync(path.join(tmpdir(), "platform-demo-"));
afterAll(() => removeWorkDir(work));

it("the demo's checkout workflow can be started from the browser and watched to completion, retry included", async () => {
  // A copy of the demo, so the test never touches state of a developer's `npm start`.
  const dir = path.join(work, "demo");
  cpSync(path.join(REPO, "demo/src"), path.join(dir, "src"), { recursive: true });
  cpSync(path.join(REPO, "demo/package.json"), path.join(dir, "package.json"));
  const dev = await startDev([dir, "--port", "8879"]);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.goto(dev.url + "/");
    await expect(page.locator("h1")).toBeDefined();
    await page.getByLabel("Item").fill("green tea");
    await page.getByLabel(/Fail the first payment attempt/).check();
    await page.getByRole("button", { name: "Start checkout" }).click();
    await page.locator("#status.completed").waitFor({ timeout: 30_000 });
    const status = await page.locator("#status").textContent();
    expect(status).toContain('"shipped":"green tea"');
    expect(status).toContain('"chargedOnAttempt":2');
    const events = await page.locator("#events li").allTextContents();
    expect(events).toEqual([
      "workflow_created",
      "step_started — start (attempt 1)",
      "step_failed — start (attempt 1): payment service timed out (first attempt fails on purpose)",
      "step_started — start (attempt 2)",
      "step_completed — start",
      "step_started — ship (attempt 1)",
      "step_completed — ship",
      "workflow_completed",
    ]);
    await page.screenshot({ path: artifactPath("demo-workflow.png"), fullPage: true });
  } finally {
    await browser.close();
    await dev.stop();
  }
});
