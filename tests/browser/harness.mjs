// What both browser suites share: Debian's Chromium, headless, on a fresh profile, with the
// flags that keep it off the network; and named checks that report and count failures.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Launches Chromium on a fresh profile (Playwright passes it as --user-data-dir). */
export async function launchBrowser() {
  const userDataDir = mkdtempSync(join(tmpdir(), "threadkeeper-chromium-"));
  const browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** How long one check may take before it fails with its name (the slowest, the 100k-event
 * page, takes seconds). */
export const CHECK_TIMEOUT_MS = 120_000;

/** Runs named checks, printing each outcome; `failures()` counts those that threw or took
 * longer than CHECK_TIMEOUT_MS. */
export function checks() {
  let failed = 0;
  return {
    async check(name, test) {
      let timer;
      const timedOut = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no result within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      });
      try {
        await Promise.race([test(), timedOut]);
        console.log("ok   " + name);
      } catch (error) {
        failed++;
        console.log("FAIL " + name + "\n" + (error && error.stack ? error.stack : error));
      } finally {
        clearTimeout(timer);
      }
    },
    failures: () => failed,
  };
}
