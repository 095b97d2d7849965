import { expect, it } from "vitest";
import { artifactPath, copyDemo, useWorkDir, withDevAndChromium } from "#test/support/e2e/index.ts";

const work = useWorkDir("platform-demo-");

it("the demo's checkout workflow can be started from the browser and watched to completion, retry included", async () => {
  const dir = copyDemo(work);
  await withDevAndChromium([dir, "--port", "8879"], async (dev, browser) => {
    const page = await browser.newPage();
    await page.goto(dev.url + "/");
    const heading = page.locator("h1");
    expect(await heading.isVisible()).toBe(true);
    expect(await heading.textContent()).toBe("Platform demo");
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
  });
});
