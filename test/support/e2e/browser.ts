import { chromium, type Browser } from "playwright-core";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { type DevProcess, REPO, startDev } from "./cliProcess.ts";

/** Debian's Chromium (installed by .ci/run), headless, with no background traffic to the closed network. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does).`);
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Where browser tests keep their screenshots (git-ignored; CI can collect them). */
export function artifactPath(name: string): string {
  const dir = path.join(REPO, "artifacts");
  mkdirSync(dir, { recursive: true });
  return path.join(dir, name);
}

/** `platform dev <args>` and a headless Chromium for `use`; both are stopped after it, whatever happens. */
export async function withDevAndChromium(
  args: string[],
  use: (dev: DevProcess, browser: Browser) => Promise<void>,
): Promise<void> {
  const dev = await startDev(args);
  try {
    const browser = await launchChromium();
    try {
      await use(dev, browser);
    } finally {
      await browser.close();
    }
  } finally {
    await dev.stop();
  }
}
