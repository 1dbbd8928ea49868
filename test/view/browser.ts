import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { describe, it } from "vitest";
import { packageRoot } from "../../src/util/package-root.js";
import { CHROMIUM, launchChromium } from "./chromium.js";

/** With SWERUN_REQUIRE_BROWSER=1 (CI), a missing chromium fails the browser tests instead of skipping them. */
export const REQUIRE_BROWSER = process.env.SWERUN_REQUIRE_BROWSER === "1";

/** A headless chromium with a fresh profile; `close` removes the profile too. */
export async function launchBrowser(): Promise<{ browser: Browser; close: () => Promise<void> }> {
  const { context, close } = await launchChromium({ width: 1280, height: 900 });
  const browser = context.browser() as Browser | null;
  return { browser: (browser ?? { newPage: () => context.newPage() }) as Browser, close };
}

/** Opens a page from a file:// URL (with an optional #hash), collecting page errors. */
export async function openFile(
  newPage: () => Promise<Page>,
  file: string,
  hash = "",
): Promise<{ page: Page; errors: string[] }> {
  const page = await newPage();
  page.setDefaultTimeout(10_000);
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  await page.goto(`${pathToFileURL(file).href}${hash}`);
  await page.waitForSelector("html[data-ready]");
  return { page, errors };
}

/** Where screenshots go (gitignored), made on demand. */
export function artifactsDir(): string {
  const dir = join(packageRoot(), "test-artifacts");
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * `describe` for tests that need chromium: skipped with one line when it is missing, failed instead when
 * SWERUN_REQUIRE_BROWSER=1.
 */
export function describeBrowser(name: string, body: () => void): void {
  if (existsSync(CHROMIUM)) describe(name, body);
  else if (REQUIRE_BROWSER)
    describe(name, () => {
      it("needs chromium (SWERUN_REQUIRE_BROWSER=1)", () => {
        throw new Error(`SWERUN_REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM}`);
      });
    });
  else {
    process.stderr.write(
      `Browser tests skipped: no chromium at ${CHROMIUM}. Set SWERUN_REQUIRE_BROWSER=1 to make this a failure.\n`,
    );
    describe.skip(name, body);
  }
}
