// The headless Chromium the browser suites drive (Debian's, which hack/test-deps.sh installs): where
// it is, whether it is there, and how a suite starts it. One place, so every suite runs it with the
// same switches (no sandbox in containers, nothing fetched in the background).
import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser suites cannot run here, or undefined when they can. */
export const chromiumMissing: string | undefined = existsSync(CHROMIUM) ? undefined : `chromium missing at ${CHROMIUM}`;

/** For the web app suites: a missing Chromium fails them when the cluster suites are required (make test), else they skip. */
export function requireChromiumForWebSuites(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (chromiumMissing && env['AGENTYARD_REQUIRE_CLUSTER_TESTS'] === '1') throw new Error(`the web app suite needs ${chromiumMissing} (hack/test-deps.sh installs it)`);
  return chromiumMissing;
}

/** `extraArgs`: switches of the suite's own (e.g. host resolver rules). */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}

/** Keeps every WebSocket the page opens (from its first script on), so that a test can cut them. */
export async function recordSockets(page: Page): Promise<void> {
  // A string: the test files are type-checked without the DOM library.
  await page.addInitScript({
    content: `{ const Native = window.WebSocket; const all = []; window.__sockets = all;
      window.WebSocket = class extends Native { constructor(url, protocols) { super(url, protocols); all.push(this); } }; }`,
  });
}

/** Closes the page's open WebSockets (recordSockets), as a network failure would; how many were open. */
export function cutSockets(page: Page): Promise<number> {
  return page.evaluate<number>(`(() => {
    const open = window.__sockets.filter((s) => s.readyState === WebSocket.OPEN);
    for (const s of open) s.close();
    return open.length;
  })()`);
}
