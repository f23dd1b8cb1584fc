// The Plugin Directory and launch links, pages of the web app at their old URLs: over real HTTP
// (the app shell with the page's data, escaped), and in a real headless Chromium: a launch link and
// the directory each start a conversation through /api/v1, with the key typed into the page when
// signed out, or with the signed-in key. AGENTYARD_SCREENSHOTS=docs/screenshots keeps screenshots.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromiumMissing, launchChromium } from '../../testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../controller/clock.ts';
import { SqliteStore } from '../../store/sqlite/sqlite-store.ts';
import { createLogger } from '../../util/log.ts';
import { SqliteAppStore } from '../db/app-db.ts';
import { startApiServer, type ApiServer } from '../server.ts';
import type { CatalogPlugin } from './catalog.ts';
import { encodeLaunchPlugins } from './launch-link.ts';

const catalog: CatalogPlugin[] = [
  { name: 'Linter', description: 'Lints <everything>', source: 'github:acme/lint', ref: 'v2' },
  { name: 'Release notes', source: 'https://git.example.com/acme/tools.git', repo_path: 'plugins/notes', ref: 'main', parameters: { style: 'short', max_items: 20 } },
];

interface StartTask {
  id: string;
  status: string;
  request: { plugins: unknown[] | null; initial_message: { content: { text: string }[] } | null };
}

describe('web pages: Plugin Directory and launch links', () => {
  let dir: string;
  let store: SqliteStore;
  let db: SqliteAppStore;
  let server: ApiServer;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'web-'));
    const clock = new ManualClock('2026-03-01T10:00:00Z');
    store = new SqliteStore(join(dir, 'store.db'), { clock });
    db = new SqliteAppStore(join(dir, 'app.db'), { clock });
    key = await db.createApiKey((await db.createUser('alice')).id);
    server = await startApiServer({ store, db, clock, namespace: 'default', settings: { capacity: 10 }, log: createLogger('web-test'), port: 0, host: '127.0.0.1', pluginCatalog: catalog });
  });

  afterAll(async () => {
    await server?.close();
    store?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function task(id: string | null): Promise<StartTask> {
    const res = await fetch(`${server.url}/api/v1/app-conversations/start-tasks?ids=${id}`, { headers: { authorization: `Bearer ${key}` } });
    return ((await res.json()) as StartTask[])[0]!;
  }

  it('serves the directory as the app with the catalog as its page data, without a key, escaped, under a strict CSP', async () => {
    const res = await fetch(`${server.url}/plugins`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/);
    const html = await res.text();
    expect(html).toContain('src="/app.js"');
    expect(html).not.toContain('<everything>');
    const data = JSON.parse(/<script type="application\/json" id="page-data">(.*?)<\/script>/s.exec(html)![1]!);
    expect(data).toEqual({ page: 'plugins', plugins: catalog });
  });

  it('answers a bad launch link with an error page that says what is wrong', async () => {
    const res = await fetch(`${server.url}/launch?plugins=${encodeURIComponent('not base64!')}`);
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(html).toContain('This launch link does not work');
    expect(html).toContain('not base64');
    const evil = encodeLaunchPlugins([{ source: '</script><script>alert(1)</script>' }]);
    const ok = await (await fetch(`${server.url}/launch?plugins=${evil}&message=${encodeURIComponent('<b>hi</b>')}`)).text();
    expect(ok).not.toContain('<script>alert(1)');
    expect(ok).not.toContain('<b>hi');
    expect(ok).toContain('\\u003cb>hi\\u003c/b>');
  });

  describe.skipIf(chromiumMissing !== undefined)(`in a headless browser${chromiumMissing ? ` (skipped: ${chromiumMissing})` : ''}`, () => {
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      browser = await launchChromium();
    });
    afterAll(async () => {
      await browser?.close();
    });
    const shot = async (name: string) => {
      if (process.env['AGENTYARD_SCREENSHOTS']) await page.screenshot({ path: join(resolve(process.env['AGENTYARD_SCREENSHOTS']), `${name}.png`), fullPage: true });
    };

    it('a launch link: review, edit a parameter, confirm trust, start; the key never enters a URL', async () => {
      page = await browser.newPage();
      const requests: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      const plugins = [{ source: 'github:acme/review', ref: 'v1', repo_path: 'plugins/review', parameters: { depth: 2, strict: false, focus: 'tests' } }];
      await page.goto(`${server.url}/launch?plugins=${encodeLaunchPlugins(plugins)}&message=${encodeURIComponent('Review my PR')}`);
      expect(await page.locator('section.plugin .source').textContent()).toBe('github:acme/review');
      expect(await page.locator('section.plugin .repo-path').textContent()).toBe('plugins/review');
      expect(await page.locator('section.plugin .ref').textContent()).toBe('v1');
      expect(await page.locator('#start').isDisabled()).toBe(true);
      await page.fill('[data-param="focus"]', 'security');
      await page.check('[data-param="strict"]');
      await page.fill('#api-key', key);
      await page.check('#trust');
      await shot('launch-link');
      expect(await page.locator('#start').isDisabled()).toBe(false);
      await page.click('#start');
      // Polled from the test: a string predicate is evaluated in the page, which its CSP forbids.
      await expect.poll(() => page.locator('#task-id').textContent(), { timeout: 15_000 }).not.toBe('');
      const taskId = await page.locator('#task-id').textContent();
      const started = await task(taskId);
      expect(started.request.plugins).toEqual([{ source: 'github:acme/review', ref: 'v1', repo_path: 'plugins/review', parameters: { depth: 2, strict: true, focus: 'security' } }]);
      expect(started.request.initial_message?.content[0]?.text).toBe('Review my PR');
      expect(await page.evaluate("sessionStorage.getItem('agentyard.apiKey')")).toBe(key);
      expect(requests.some((u) => u.includes(key))).toBe(false);
      await page.close();
    });

    it('the Plugin Directory: choose one plugin, review it, confirm trust, start with only that plugin', async () => {
      page = await browser.newPage();
      await page.goto(`${server.url}/plugins`);
      await page.check('input[name="plugin"][value="1"]');
      await page.click('#create');
      const shown = page.locator('section.plugin:not([hidden])');
      expect(await shown.count()).toBe(1);
      expect(await shown.locator('.source').textContent()).toBe('https://git.example.com/acme/tools.git');
      expect(await shown.locator('.repo-path').textContent()).toBe('plugins/notes');
      expect(await shown.locator('.ref').textContent()).toBe('main');
      await shot('plugin-directory');
      await page.fill('#api-key', key);
      await page.check('#trust');
      await page.click('#start');
      // Polled from the test: a string predicate is evaluated in the page, which its CSP forbids.
      await expect.poll(() => page.locator('#task-id').textContent(), { timeout: 15_000 }).not.toBe('');
      const taskId = await page.locator('#task-id').textContent();
      const started = await task(taskId);
      expect(started.request.plugins).toEqual([{ source: 'https://git.example.com/acme/tools.git', ref: 'main', repo_path: 'plugins/notes', parameters: { style: 'short', max_items: 20 } }]);
      expect(started.request.initial_message).toBeNull();
      await page.close();
    });

    it('signed in, the directory starts with the session key (no key field), and links to the conversation', async () => {
      page = await browser.newPage();
      await page.goto(`${server.url}/`);
      await page.evaluate((k) => sessionStorage.setItem('agentyard.apiKey', k), key);
      await page.goto(`${server.url}/plugins`);
      await page.check('input[name="plugin"][value="0"]');
      await page.click('#create');
      await page.waitForSelector('#trust');
      expect(await page.locator('#api-key').count()).toBe(0);
      await page.fill('#message', 'Lint it');
      await page.check('#trust');
      await page.click('#start');
      // Polled from the test: a string predicate is evaluated in the page, which its CSP forbids.
      await expect.poll(() => page.locator('#task-id').textContent(), { timeout: 15_000 }).not.toBe('');
      const started = await task(await page.locator('#task-id').textContent());
      expect(started.request.plugins).toEqual([{ source: 'github:acme/lint', ref: 'v2' }]);
      expect(started.request.initial_message?.content[0]?.text).toBe('Lint it');
      await page.close();
    });

    it('a broken launch link says what is wrong, in the app', async () => {
      page = await browser.newPage();
      const res = await page.goto(`${server.url}/launch?plugins=${encodeURIComponent('not base64!')}`);
      expect(res?.status()).toBe(400);
      expect(await page.locator('#error').textContent()).toContain('not base64');
      expect(await page.locator('h1').textContent()).toBe('This launch link does not work');
      await page.close();
    });

    it('a refused key is reported and forgotten', async () => {
      page = await browser.newPage();
      await page.goto(`${server.url}/launch?plugins=${encodeLaunchPlugins([{ source: 'github:acme/x' }])}`);
      await page.fill('#api-key', 'not-a-key');
      await page.check('#trust');
      await page.click('#start');
      await expect.poll(() => page.getAttribute('#status', 'data-kind'), { timeout: 15_000 }).toBe('error');
      expect(await page.locator('#status').textContent()).toContain('API key was refused');
      expect(await page.evaluate("sessionStorage.getItem('agentyard.apiKey')")).toBeNull();
      await page.close();
    });
  });
});
