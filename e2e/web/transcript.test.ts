// A conversation's page, live, in a real headless Chromium (Debian's), against the real API server
// on real SQLite stores and a real agent server whose sink pushes into the app's event log. The
// record (sandbox and execution status) comes from the facade's change stream of that one
// conversation and the events through the facade's relay of the agent server's WebSocket: nothing
// is polled. A dropped socket resumes after the last event shown, every event once and in order.
// Where neither stream can be opened (a proxy that refuses them), the page polls, and still shows
// each event once. The controller's part is played through the store.
import type { Browser, Page } from 'playwright-core';
import { cutSockets, launchChromium, recordSockets, requireChromiumForWebSuites } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSandboxPhase, startWorkspaceHarness, type WorkspaceHarness } from '../../src/facade/test-support.ts';

const missing = requireChromiumForWebSuites();
const poll = <T>(fn: () => T | Promise<T>) => expect.poll(fn, { timeout: 20_000 });

describe.skipIf(missing !== undefined)(`a conversation's page, live, in a browser${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let h: WorkspaceHarness;
  let browser: Browser;
  let id: string;
  const pageErrors: string[] = [];

  /** A signed-in page on the conversation; counts its reads of the record (`?ids=`) and its event searches. */
  const openPage = async (setup: (p: Page) => Promise<void> = async () => undefined) => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    const seen = { recordReads: 0, eventSearches: 0 };
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.on('request', (r) => {
      if (r.url().includes('/api/v1/app-conversations?ids=')) seen.recordReads++;
      if (r.url().includes('/events/search')) seen.eventSearches++;
    });
    // Every WebSocket the app opens, so a test can cut them as a network failure would.
    await recordSockets(page);
    await setup(page);
    await page.goto(`${h.server.url}/`);
    await page.fill('#api-key', h.alice.key);
    await page.click('button[type=submit]');
    await page.getByRole('heading', { name: 'Conversations' }).waitFor();
    await page.evaluate(`location.hash = '#/c/${id}'`);
    return { page, seen };
  };
  const say = async (text: string) => {
    const res = await h.call('POST', `/api/v1/app-conversations/${id}/send-message`, { body: { role: 'user', content: [{ type: 'text', text }], run: true } });
    expect(res.status).toBe(200);
  };
  const messages = (page: Page) => page.locator('#transcript li.ev.message').allTextContents();
  /** The page shows each event of the log once, in the log's order (the rows the log's messages make). */
  const eachOnceInOrder = async (page: Page) => {
    const want = async () => {
      const res = await h.call('GET', `/api/v1/conversation/${id}/events/search?limit=100&kind__eq=MessageEvent`);
      return (res.body.items as { id: string }[]).map((e) => e.id);
    };
    await poll(async () => {
      const shown = await page.evaluate<{ all: string[]; rows: string[] }>(`({
        all: [...document.querySelectorAll('#transcript [data-id]')].map((el) => el.getAttribute('data-id')),
        rows: [...document.querySelectorAll('#transcript li.ev.message')].map((el) => el.getAttribute('data-id')),
      })`);
      return { duplicates: shown.all.length - new Set(shown.all).size, rows: shown.rows, want: await want() };
    }).toSatisfy((r: { duplicates: number; rows: string[]; want: string[] }) => r.duplicates === 0 && r.rows.length > 0 && JSON.stringify(r.rows) === JSON.stringify(r.want));
  };

  beforeAll(async () => {
    // alice's RUNNING sandbox sb-1 is a real agent server whose sink feeds the app's event log.
    h = await startWorkspaceHarness({}, { sink: true });
    id = await h.conversation(h.workspace);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  let live: Awaited<ReturnType<typeof openPage>>;

  it('shows what the agent appends and the record as it changes, pushed: no reload, no polling', async () => {
    live = await openPage();
    const { page, seen } = live;
    await poll(() => page.textContent('#feed-state')).toBe('live');
    await poll(() => page.textContent('#sandbox-status')).toBe('RUNNING');
    await say('hello');
    await poll(() => messages(page)).toEqual([expect.stringContaining('hello'), expect.stringContaining('echo: hello')]);
    await poll(() => page.textContent('#execution-status')).toBe('finished');
    // The sandbox's status moves (the controller's part): the record on the page follows.
    await setSandboxPhase(h.store, 'sb-1', 'STARTING');
    await poll(() => page.textContent('#sandbox-status')).toBe('STARTING');
    await setSandboxPhase(h.store, 'sb-1', 'RUNNING');
    await poll(() => page.textContent('#sandbox-status')).toBe('RUNNING');
    // One read of the history when the page opened; no record reads at all.
    expect(seen).toEqual({ recordReads: 0, eventSearches: 1 });
    await eachOnceInOrder(page);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it('a dropped socket resumes after the last event shown: what came meanwhile shows, each event once, in order', async () => {
    const { page, seen } = live;
    const cut = await cutSockets(page);
    expect(cut).toBe(1);
    await poll(() => page.textContent('#feed-state')).toBe('reconnecting');
    await say('while cut off');
    await poll(() => page.textContent('#feed-state')).toBe('live');
    await poll(() => messages(page)).toEqual([expect.stringContaining('hello'), expect.stringContaining('echo: hello'), expect.stringContaining('while cut off'), expect.stringContaining('echo: while cut off')]);
    await eachOnceInOrder(page);
    // The reconnect resumed by id over the socket: still nothing polled.
    expect(seen).toEqual({ recordReads: 0, eventSearches: 1 });
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('polls where neither stream can be opened, and still shows each event once', async () => {
    const { page, seen } = await openPage(async (p) => {
      // A proxy that answers the change stream with 404 and refuses WebSocket upgrades.
      await p.route('**/api/v1/app-conversations/changes**', (r) => r.fulfill({ status: 404, contentType: 'application/json', body: '{"detail":"Not Found"}' }));
      // (The app's sockets go to a path the facade upgrades nothing on, as such a proxy would answer.)
      await p.addInitScript({
        content: `{ const Native = window.WebSocket;
          window.WebSocket = class extends Native { constructor(url, protocols) { const u = new URL(url); u.pathname = '/no-socket-here'; super(u, protocols); } }; }`,
      });
    });
    await poll(() => page.textContent('#feed-state')).toBe('polling');
    await poll(() => page.textContent('#sandbox-status')).toBe('RUNNING');
    await poll(() => messages(page)).toHaveLength(4);
    await say('over polling');
    await poll(() => messages(page)).toEqual(expect.arrayContaining([expect.stringContaining('echo: over polling')]));
    await setSandboxPhase(h.store, 'sb-1', 'STARTING');
    await poll(() => page.textContent('#sandbox-status')).toBe('STARTING');
    await eachOnceInOrder(page);
    expect(seen.recordReads).toBeGreaterThan(1);
    expect(seen.eventSearches).toBeGreaterThan(1);
    expect(pageErrors).toEqual([]);
    await page.close();
  }, 60_000);
});
