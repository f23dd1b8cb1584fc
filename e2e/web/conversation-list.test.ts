// The conversation list's live status in a real headless Chromium (Debian's), against the real API
// server on real SQLite stores: sandbox and execution status are pushed by the facade's change
// stream (Server-Sent Events), not polled; only the signed-in user's conversations come; and when
// the API goes away and comes back, the list resumes from its last event (Last-Event-ID) and shows
// every change made meanwhile. The controller's part is played through the store, as the change
// feed sees it either way.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, requireChromiumForWebSuites } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConversationKind, type Conversation } from '../../src/api/conversation.ts';
import { systemClock } from '../../src/controller/clock.ts';
import { SqliteAppStore } from '../../src/facade/db/app-db.ts';
import type { AppUser } from '../../src/facade/db/types.ts';
import { startApiServer, type ApiServer } from '../../src/facade/server.ts';
import { makeSandbox, NS, setSandboxPhase, setStartTask } from '../../src/facade/test-support.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { createLogger } from '../../src/util/log.ts';

const missing = requireChromiumForWebSuites();
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 15_000 });

describe.skipIf(missing !== undefined)(`the conversation list, live, in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'web-list-'));
  let store: SqliteStore;
  let db: SqliteAppStore;
  let server: ApiServer;
  let port = 0;
  let browser: Browser;
  let page: Page;
  let alice: { user: AppUser; key: string };
  let bob: { user: AppUser; key: string };
  const pageErrors: string[] = [];
  /** The list's requests to the API: the change stream's (with the id it resumed after), and any search. */
  const streams: { lastEventId: string | undefined }[] = [];
  let searches = 0;

  const start = async () => {
    server = await startApiServer({ store, db, clock: systemClock, namespace: NS, settings: { capacity: 20 }, log: createLogger('web-list', 'silent'), port, host: '127.0.0.1' });
    port = Number(new URL(server.url).port);
  };
  const startConversation = async (key: string, title: string) => {
    const res = await fetch(`${server.url}/api/v1/app-conversations`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
    expect(res.status).toBe(200);
    const { items } = await store.list(ConversationKind, NS, { labelSelector: `agentyard.dev/start-task=${((await res.json()) as { id: string }).id}` });
    return items[0]!.metadata.name;
  };
  const setExecution = async (id: string, executionStatus: NonNullable<Conversation['status']>['executionStatus']) => {
    const c = (await store.get(ConversationKind, NS, id))!;
    await store.updateStatus(ConversationKind, { ...c, status: { ...c.status, executionStatus } });
  };
  const row = (id: string) => page.locator(`#conversations tr[data-id="${id}"]`);

  beforeAll(async () => {
    store = new SqliteStore(join(dir, 'store.db'), { clock: systemClock });
    db = new SqliteAppStore(join(dir, 'app.db'), { clock: systemClock });
    const mk = async (name: string) => {
      const user = await db.createUser(name);
      return { user, key: await db.createApiKey(user.id) };
    };
    alice = await mk('alice');
    bob = await mk('bob');
    await start();
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/app-conversations/changes')) streams.push({ lastEventId: r.headers()['last-event-id'] });
      if (r.url().includes('/api/v1/app-conversations/search')) searches++;
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    store?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let first: string;
  let second: string;
  let bobs: string;

  it('shows the signed-in user\'s conversations, then sandbox and execution status as they change, pushed (no polling)', async () => {
    first = await startConversation(alice.key, 'first task');
    bobs = await startConversation(bob.key, 'bob task');
    await makeSandbox(store, alice.user, 'sb-alice', 'STARTING', { url: 'http://127.0.0.1:9', key: 'sk-alice' });
    await makeSandbox(store, bob.user, 'sb-bob', 'RUNNING', { url: 'http://127.0.0.1:9', key: 'sk-bob' });
    await setStartTask(store, first, 'READY', 'sb-alice');
    await setStartTask(store, bobs, 'READY', 'sb-bob');

    await page.goto(`${server.url}/`);
    await page.fill('#api-key', alice.key);
    await page.click('button[type=submit]');
    await poll(() => row(first).locator('.sandbox-status').textContent()).toBe('STARTING');

    await setSandboxPhase(store, 'sb-alice', 'RUNNING');
    await poll(() => row(first).locator('.sandbox-status').textContent()).toBe('RUNNING');
    await setExecution(first, 'running');
    await poll(() => row(first).locator('.execution-status').textContent()).toBe('running');
    // Waiting for confirmation reads PAUSED on a running sandbox (spec part 3), as search shows it.
    await setExecution(first, 'waiting_for_confirmation');
    await poll(() => row(first).locator('.sandbox-status').textContent()).toBe('PAUSED');
    second = await startConversation(alice.key, 'second task');
    await poll(() => page.locator('#conversations tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')))).toEqual([second, first]);

    // Bob's conversation and his changes never reach alice's page.
    await setSandboxPhase(store, 'sb-bob', 'PAUSED');
    await setExecution(bobs, 'finished');
    await setExecution(first, 'running');
    await poll(() => row(first).locator('.execution-status').textContent()).toBe('running');
    expect(await page.locator(`tr[data-id="${bobs}"]`).count()).toBe(0);
    // One stream carried all of it; nothing polled the search.
    expect(streams).toHaveLength(1);
    expect(searches).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('resumes after the API comes back, from its last event: every change made meanwhile shows', async () => {
    await server.close();
    // While the list is cut off: the sandbox pauses, the agent finishes, one conversation goes, one comes.
    await setSandboxPhase(store, 'sb-alice', 'PAUSED');
    await setExecution(first, 'finished');
    const removed = await store.get(ConversationKind, NS, second);
    await store.delete(ConversationKind, NS, removed!.metadata.name);
    await poll(() => page.textContent('.card .field-error').catch(() => null)).toContain('reconnecting');
    await start();
    const third = await startConversation(alice.key, 'third task');

    await poll(() => row(first).locator('.sandbox-status').textContent()).toBe('PAUSED');
    await poll(() => row(first).locator('.execution-status').textContent()).toBe('finished');
    await poll(() => row(second).count()).toBe(0);
    await poll(() => row(third).count()).toBe(1);
    // The reconnect asked to resume after the last event it had shown.
    expect(streams.length).toBeGreaterThanOrEqual(2);
    expect(streams.at(-1)!.lastEventId).toBeTruthy();
    expect(await page.locator('.card .field-error').count()).toBe(0);
    expect(searches).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
