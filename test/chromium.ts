/**
 * What the tests that drive Debian's headless Chromium (through playwright-core) share: where the
 * browser is, the origin the server is configured as, a launch whose host resolver sends that
 * origin to the test server's ephemeral port (every other host resolves to nothing, so a page that
 * reached outside would fail), a page that records every kind of trouble it meets, and full-page
 * screenshots kept in `test-artifacts/` (or TEST_ARTIFACTS_DIR) for a person to look at.
 *
 *   server = await createTestServer({ env: { LOCAL_HTTPS: "false" } });
 *   browser = await launchChromium(server);
 *   const { context, page, problems } = await openPage(browser, { width: 1200, height: 900 });
 *   await page.goto(`${ORIGIN}/about`);
 *   await screenshot(page, "about");
 *   assert.deepEqual(problems, []);
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { TEST_ENGINE, type TestServer } from "./kit.ts";

/** The Chromium binary, if this machine has one. */
export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find(existsSync);

/** A `skip` option for tests that need Chromium: false when there is one, else why not. */
export const SKIP = !CHROMIUM && "no Chromium at /usr/bin/chromium (Debian: apt-get install chromium)";

/** The server's base URL when created with LOCAL_HTTPS=false, and what Chromium resolves to it. */
export const ORIGIN = "http://rookery.test";

/** Where screenshots are kept. */
export const ARTIFACTS =
  process.env.TEST_ARTIFACTS_DIR || fileURLToPath(new URL("../test-artifacts/", import.meta.url));

/**
 * Makes `server` (created with LOCAL_HTTPS=false, so that it is {@link ORIGIN}) listen on an
 * ephemeral port and launches Chromium with rookery.test mapped to that port and nothing else
 * resolving.
 */
export async function launchChromium(server: TestServer): Promise<Browser> {
  assert.equal(server.config.baseUrl, ORIGIN);
  await server.app.listen({ host: "127.0.0.1", port: 0 });
  const { port } = server.app.server.address() as AddressInfo;
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    timeout: 30_000,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--host-resolver-rules=MAP rookery.test 127.0.0.1:${port}, MAP * ~NOTFOUND`,
    ],
  });
}

export interface WatchedPage {
  /** The page's own context, for the caller to close. */
  context: BrowserContext;
  page: Page;
  /** Console errors, page errors, failed requests and error answers, in the order they came. */
  problems: string[];
}

/** A page in a fresh context of `viewport` size, recording every problem it meets. */
export async function openPage(browser: Browser, viewport: { width: number; height: number }): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport });
  let page: Page;
  try {
    page = await context.newPage();
  } catch (error) {
    await context.close();
    throw error;
  }
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (req) => problems.push(`failed: ${req.url()} ${req.failure()?.errorText}`));
  page.on("response", (res) => {
    if (res.status() >= 400) problems.push(`answered ${res.status()}: ${res.url()}`);
  });
  return { context, page, problems };
}

/** Keeps a full-page screenshot of `page` as `<name>-<engine>.png` in {@link ARTIFACTS}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}-${TEST_ENGINE}.png`), fullPage: true });
}
