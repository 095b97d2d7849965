import { chromium, type Browser } from "playwright-core";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll } from "vitest";
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

/**
 * `platform dev <args>` and a headless Chromium for `use`; both are stopped after it, whatever happens. With
 * `shared` (the file's Chromium, `useChromium`), that one is used and left open: one launch per file.
 */
export async function withDevAndChromium(
  args: string[],
  use: (dev: DevProcess, browser: Browser) => Promise<void>,
  shared?: () => Browser,
): Promise<void> {
  const dev = await startDev(args);
  try {
    const browser = shared ? shared() : await launchChromium();
    try {
      await use(dev, browser);
    } finally {
      if (!shared) await browser.close();
    }
  } finally {
    await dev.stop();
  }
}

/** One headless Chromium for the tests of a file: launched before them, closed after. Read it inside a test. */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error("Chromium did not start");
    return browser;
  };
}

/**
 * `platform dev <args>` and a headless Chromium shared by the tests of a file (each test its own browser
 * contexts): `prepare` writes the project, both start before the tests and stop after them. Answers a runner
 * with `withDevAndChromium`'s shape for each test.
 */
export function useDevAndChromium(
  args: string[],
  prepare: () => void = () => {},
): (use: (dev: DevProcess, browser: Browser) => Promise<void>) => Promise<void> {
  const chromium = useChromium();
  let dev: DevProcess | undefined;
  beforeAll(async () => {
    prepare();
    dev = await startDev(args);
  });
  afterAll(async () => {
    await dev?.stop();
  });
  return async (use) => {
    if (!dev) throw new Error(`platform dev ${args.join(" ")} did not start`);
    await use(dev, chromium());
  };
}
