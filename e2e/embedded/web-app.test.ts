// The web app at `/` in a real headless Chromium against `agentyard up` with the scripted model:
// sign in with the printed key (a wrong one is refused), a 422 shown beside its field, start a
// conversation and watch the agent's message, tool call and observation arrive over the agent
// server's WebSocket, send a follow-up, and see the live status in the list.
// AGENTYARD_SCREENSHOTS=docs/screenshots keeps a screenshot of each page there (for the README).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const CHROMIUM = '/usr/bin/chromium';
const missing = existsSync(CHROMIUM) ? undefined : `chromium missing at ${CHROMIUM}`;
if (missing && process.env['AGENTYARD_REQUIRE_CLUSTER_TESTS'] === '1') throw new Error(`the web app suite needs ${missing} (hack/test-deps.sh installs it)`);

describe.skipIf(missing !== undefined)(`the web app in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let llm: ScriptedLlm;
  let svc: RunningService;
  let stop: (() => Promise<void>) | undefined;
  let browser: Browser;
  let page: Page;
  const shots = process.env['AGENTYARD_SCREENSHOTS'] ? resolve(process.env['AGENTYARD_SCREENSHOTS']) : mkdtempSync(join(tmpdir(), 'web-app-shots-'));
  const shot = (name: string) => page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });

  beforeAll(async () => {
    mkdirSync(shots, { recursive: true });
    ({ llm, svc, stop } = await startServiceWithModel());
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await stop?.();
    if (!process.env['AGENTYARD_SCREENSHOTS']) rmSync(shots, { recursive: true, force: true });
  });

  it('serves the app shell under the strict CSP, and its bundle', async () => {
    const res = await fetch(`${svc.url}/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+'; connect-src 'self' ws:\/\/127\.0\.0\.1:\*;/);
    const js = await fetch(`${svc.url}/app.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
    expect(await js.text()).toContain('agentyard.apiKey');
  });

  it('refuses a wrong key, beside the field', async () => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/.test(m.text())) errors.push(m.text());
    });
    await page.goto(`${svc.url}/`);
    await page.fill('#api-key', 'not-a-key');
    await page.click('button[type=submit]');
    await expect.poll(() => page.textContent('#api-key-error')).toContain('refused');
    await shot('sign-in');
    expect(errors).toEqual([]);
  });

  it('signs in, shows a 422 next to its field, starts a conversation and shows the agent live', async () => {
    await page.fill('#api-key', svc.apiKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('#message');
    expect(await page.evaluate(() => sessionStorage.getItem('agentyard.apiKey'))).toBe(svc.apiKey);

    await page.fill('#message', 'Say hello from the web app');
    await page.fill('#repository', 'not a repository');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await expect.poll(() => page.textContent('#repository-error').catch(() => null)).toMatch(/pattern|match/i);
    expect(await page.$('#branch-error')).toBeNull();
    expect(await page.getAttribute('#repository', 'aria-invalid')).toBe('true');
    await shot('new-conversation-422');

    llm.push(
      { content: 'Looking around first.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo hello-from-the-web-app', summary: 'say hello' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Said hello.' } }] },
    );
    await page.fill('#repository', '');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await page.waitForURL(/#\/c\/[0-9a-f]{32}$/, { timeout: 60_000 });
    const transcript = page.locator('#transcript');
    await expect.poll(() => transcript.textContent(), { timeout: 60_000 }).toContain('Looking around first.');
    await expect.poll(() => page.locator('.ev.action .tool').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining(['terminal', 'finish']));
    await expect.poll(() => page.locator('.ev.observation').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining([expect.stringContaining('hello-from-the-web-app')]));
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).toBe('live');

    // The follow-up's events come only over the WebSocket (the history was read before them).
    llm.push({ content: 'Hello again.', toolCalls: [{ name: 'finish', arguments: { message: 'Answered the follow-up.' } }] });
    await page.fill('#followup', 'And once more, please');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => page.locator('.ev.role-user').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining([expect.stringContaining('And once more, please')]));
    await expect.poll(() => transcript.textContent(), { timeout: 60_000 }).toContain('Hello again.');
    await expect.poll(() => page.textContent('#execution-status'), { timeout: 30_000 }).toBe('finished');
    await shot('conversation');

    // Each event once, whichever path (history or socket) brought it.
    const ids = await page.locator('#transcript > li').count();
    const users = await page.locator('.ev.role-user').count();
    expect(users).toBe(2);
    expect(ids).toBeGreaterThan(4);
  }, 180_000);

  it('pause closes the live feed; resume reconnects it and it goes on after the last event seen', async () => {
    const before = await page.locator('#transcript > li').count();
    await page.click('button:text-is("Pause")');
    await expect.poll(() => page.textContent('#sandbox-status'), { timeout: 60_000 }).toBe('PAUSED');
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).not.toBe('live');
    await shot('conversation-paused');
    await page.click('button:text-is("Resume")');
    await expect.poll(() => page.textContent('#sandbox-status'), { timeout: 60_000 }).toBe('RUNNING');
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).toBe('live');

    llm.push({ content: 'Back after the pause.', toolCalls: [{ name: 'finish', arguments: { message: 'Resumed fine.' } }] });
    await page.fill('#followup', 'Still there?');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => page.locator('#transcript').textContent(), { timeout: 60_000 }).toContain('Back after the pause.');

    // A message while paused resumes the sandbox; the agent answers while this page has no socket,
    // and the reconnect replays what it missed.
    await page.click('button:text-is("Pause")');
    await expect.poll(() => page.textContent('#sandbox-status'), { timeout: 60_000 }).toBe('PAUSED');
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).not.toBe('live');
    llm.push({ content: 'Answered while you were away.', toolCalls: [{ name: 'finish', arguments: { message: 'Gap filled.' } }] });
    await page.fill('#followup', 'A message while paused');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => page.locator('#transcript').textContent(), { timeout: 60_000 }).toContain('Answered while you were away.');

    const ids = await page.locator('#transcript > li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-id')));
    expect(ids.length).toBeGreaterThan(before);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await page.locator('.ev.role-user').count()).toBe(4);
  }, 180_000);

  it('lists the conversation with its live status', async () => {
    await page.click('text=← Conversations');
    const row = page.locator('#conversations tbody tr').first();
    await expect.poll(() => row.locator('.sandbox-status').textContent(), { timeout: 30_000 }).toBe('RUNNING');
    await expect.poll(() => row.locator('.execution-status').textContent(), { timeout: 30_000 }).toBe('finished');
    await shot('conversations');

    await page.fill('#search', 'no such title');
    await expect.poll(() => page.textContent('#no-conversations').catch(() => null), { timeout: 10_000 }).toContain('No conversation title contains');
    await page.fill('#search', 'hello from the web');
    await expect.poll(() => page.locator('#conversations tbody tr').count(), { timeout: 10_000 }).toBe(1);
  });

  it('deletes the conversation from its page', async () => {
    const id = await page.locator('#conversations tbody tr').first().getAttribute('data-id');
    await page.click(`#conversations tr[data-id="${id}"] a`);
    page.once('dialog', (d) => void d.accept());
    await page.click('button:text-is("Delete")');
    await page.waitForURL(/#\/$/);
    await expect.poll(() => page.locator(`#conversations tr[data-id="${id}"]`).count(), { timeout: 30_000 }).toBe(0);
    const { body } = await svc.api<(unknown | null)[]>('GET', `/api/v1/app-conversations?ids=${id}`);
    expect(body).toEqual([null]);
  });

  it('signs out, saying why, when the key in the tab is refused', async () => {
    await page.evaluate(() => sessionStorage.setItem('agentyard.apiKey', 'revoked-or-made-up'));
    await page.reload();
    await expect.poll(() => page.textContent('#api-key-error').catch(() => null), { timeout: 10_000 }).toContain('refused');
    expect(await page.evaluate(() => sessionStorage.getItem('agentyard.apiKey'))).toBeNull();
  });
});
