// The web app at `/` in a real headless Chromium against `agentyard up` with the scripted model:
// sign in with the printed key (a wrong one is refused), 422s shown beside their fields (repository,
// plugin, secret), start a conversation and watch the agent's thinking, message, and tool call
// with its observation arrive over the facade's relay of the agent server's WebSocket; the socket
// cut mid-run and every event shown once, in order; approve and reject in confirmation mode; the
// workspace files and the Git diff; rename, download, fork, pause/resume, the live list, delete.
// AGENTYARD_SCREENSHOTS=docs/screenshots keeps a screenshot of each page there (for the README).
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { cutSockets, launchChromium, recordSockets, requireChromiumForWebSuites } from '../../src/testing/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import { startServiceWithModel, type RunningService } from './harness.ts';

const missing = requireChromiumForWebSuites();

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
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 }, acceptDownloads: true });
    // Every WebSocket the app opens, so a test can cut them (as a network failure would).
    await recordSockets(page);
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

  it('signs in, shows 422s next to their fields, starts a conversation and shows the agent live', async () => {
    await page.fill('#api-key', svc.apiKey);
    await page.click('button[type=submit]');
    await page.waitForSelector('#message');
    expect(await page.evaluate(() => sessionStorage.getItem('agentyard.apiKey'))).toBe(svc.apiKey);

    await page.fill('#message', 'Say hello from the web app');
    await page.fill('#repository', 'not a repository');
    await page.click('#add-plugin');
    await page.click('#add-secret');
    await page.fill('#secret-0-name', 'not a name!');
    await page.fill('#secret-0-value', 'secret-value-never-shown');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await expect.poll(() => page.textContent('#repository-error').catch(() => null)).toMatch(/pattern|match/i);
    expect(await page.$('#branch-error')).toBeNull();
    expect(await page.getAttribute('#repository', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#plugin-0-source-error')).toBeTruthy();
    expect(await page.getAttribute('#plugin-0-source', 'aria-invalid')).toBe('true');
    await shot('new-conversation-422');
    // The plugin's own check (its repository) and the secret's name are refused at their fields too.
    await page.fill('#repository', '');
    await page.fill('#plugin-0-source', 'https://example.invalid/plugin.git');
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await expect.poll(() => page.textContent('#secret-0-error').catch(() => null)).toMatch(/letters, digits/);
    await page.click('[data-plugin="0"] button.danger');
    await page.fill('#secret-0-name', 'WEB_APP_SECRET');

    llm.push(
      {
        reasoning: 'Thinking about how to say hello.',
        content: 'Looking around first.',
        toolCalls: [{ name: 'terminal', arguments: { command: 'git init -q . && git -c user.email=w@a -c user.name=w commit -q --allow-empty -m init && echo hello-from-the-web-app | tee hello.txt', summary: 'say hello' } }],
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Said hello.' } }] },
    );
    await page.click('form[aria-labelledby=new-title] button[type=submit]');
    await page.waitForURL(/#\/c\/[0-9a-f]{32}$/, { timeout: 60_000 });
    const transcript = page.locator('#transcript');
    await expect.poll(() => transcript.textContent(), { timeout: 60_000 }).toContain('Looking around first.');
    await expect.poll(() => page.locator('.ev.action .tool').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining(['terminal', 'finish']));
    // The observation sits in its tool call's row.
    await expect.poll(() => page.locator('.ev.action:has(code.tool:text-is("terminal")) .result.observation').allTextContents(), { timeout: 60_000 }).toEqual([expect.stringContaining('hello-from-the-web-app')]);
    expect(await page.locator('.ev.action .thinking pre').first().textContent()).toContain('Thinking about how to say hello.');
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).toBe('live');

    // The follow-up's events come only over the WebSocket (the history was read before them).
    llm.push({ content: 'Hello again.', toolCalls: [{ name: 'finish', arguments: { message: 'Answered the follow-up.' } }] });
    await page.fill('#followup', 'And once more, please');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => page.locator('.ev.role-user').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining([expect.stringContaining('And once more, please')]));
    await expect.poll(() => transcript.textContent(), { timeout: 60_000 }).toContain('Hello again.');
    await expect.poll(() => page.textContent('#execution-status'), { timeout: 30_000 }).toBe('finished');
    await page.locator('.ev.action .thinking summary').first().click();
    await shot('conversation');
    expect(await page.content()).not.toContain('secret-value-never-shown');
    expect(await page.locator('.ev.role-user').count()).toBe(2);
    await expectEachEventOnceInOrder();
  }, 180_000);

  /** The conversation open in the page, from its URL. */
  const openId = () => /#\/c\/([0-9a-f]{32})$/.exec(page.url())![1]!;

  /**
   * Every message, tool call and result the app's event log holds for the open conversation is on
   * the page once: messages and tool calls in the log's order, each result inside its call's row.
   */
  async function expectEachEventOnceInOrder(): Promise<void> {
    const id = openId();
    type Ev = { id: string; kind: string; action_id?: string; tool_call_id?: string };
    const log = async (): Promise<Ev[]> => {
      const out: Ev[] = [];
      let pageId: string | null = null;
      do {
        const res: { body: { items: Ev[]; next_page_id: string | null } } = await svc.api('GET', `/api/v1/conversation/${id}/events/search?limit=100${pageId ? `&page_id=${pageId}` : ''}`);
        out.push(...res.body.items);
        pageId = res.body.next_page_id;
      } while (pageId);
      return out;
    };
    const onPage = () =>
      page.evaluate<{ all: string[]; rows: string[]; results: string[][] }>(`({
        all: [...document.querySelectorAll('#transcript [data-id]')].map((el) => el.getAttribute('data-id')),
        rows: [...document.querySelectorAll('#transcript li.ev.message, #transcript li.ev.action')].map((el) => el.getAttribute('data-id')),
        results: [...document.querySelectorAll('#transcript .result[data-id]')].map((el) => [el.getAttribute('data-id'), el.closest('li').getAttribute('data-id')]),
      })`);
    await expect
      .poll(async () => {
        const events = await log();
        const actionOfCall = new Map(events.filter((e) => e.kind === 'ActionEvent').map((e) => [e.tool_call_id!, e.id]));
        const shown = await onPage();
        return {
          rows: shown.rows,
          results: shown.results.sort(),
          duplicates: shown.all.length - new Set(shown.all).size,
          want: {
            rows: events.filter((e) => e.kind === 'MessageEvent' || e.kind === 'ActionEvent').map((e) => e.id),
            // An error answering a call (e.g. the call cut short by a pause) is its result too.
            results: events
              .filter((e) => ['ObservationEvent', 'UserRejectObservation', 'AgentErrorEvent'].includes(e.kind) && actionOfCall.has(e.tool_call_id!))
              .map((e) => [e.id, actionOfCall.get(e.tool_call_id!)!])
              .sort(),
          },
        };
      }, { timeout: 30_000 })
      .toSatisfy((r: { rows: string[]; results: string[][]; duplicates: number; want: { rows: string[]; results: string[][] } }) => r.duplicates === 0 && r.rows.length > 0 && JSON.stringify(r.rows) === JSON.stringify(r.want.rows) && JSON.stringify(r.results) === JSON.stringify(r.want.results));
  }

  it('the socket cut mid-run: the transcript resumes without gaps or duplicates', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reachedHeld!: () => void;
    const atHeld = new Promise<void>((r) => (reachedHeld = r));
    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo before-the-cut', summary: 'before' } }] },
      async () => {
        reachedHeld();
        await held;
        return { content: 'Carrying on after the cut.', toolCalls: [{ name: 'terminal', arguments: { command: 'echo after-the-cut', summary: 'after' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Done across the cut.' } }] },
    );
    await page.fill('#followup', 'Work across a broken connection');
    await page.click('.followup button[type=submit]');
    await atHeld;
    await expect.poll(() => page.locator('.result.observation').allTextContents(), { timeout: 30_000 }).toEqual(expect.arrayContaining([expect.stringContaining('before-the-cut')]));
    const cut = await cutSockets(page);
    expect(cut).toBe(1);
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 5_000 }).toBe('reconnecting');
    release(); // the agent goes on while the page has no socket
    await expect.poll(() => page.locator('.result.observation').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining([expect.stringContaining('after-the-cut')]));
    await expect.poll(() => page.locator('#transcript').textContent(), { timeout: 60_000 }).toContain('Carrying on after the cut.');
    await expect.poll(() => page.textContent('#feed-state'), { timeout: 30_000 }).toBe('live');
    await expect.poll(() => page.textContent('#execution-status'), { timeout: 30_000 }).toBe('finished');
    await expectEachEventOnceInOrder();
  }, 120_000);

  it('confirmation mode: a rejected action does not run, an approved one does', async () => {
    await page.selectOption('#confirmation-policy', 'AlwaysConfirm');
    await expect.poll(() => page.inputValue('#confirmation-policy')).toBe('AlwaysConfirm');
    const convId = openId();
    llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo must-not-run > rejected.txt', summary: 'write rejected.txt' } }] });
    await page.fill('#followup', 'Write rejected.txt');
    await page.click('.followup button[type=submit]');
    await page.waitForSelector('#confirmation', { timeout: 60_000 });
    expect(await page.textContent('#confirmation')).toContain('write rejected.txt');
    expect(await page.textContent('#execution-status')).toBe('waiting_for_confirmation');
    await shot('confirmation');
    await page.fill('#reject-reason', 'Not that file');
    await page.click('#confirmation button:text-is("Reject")');
    await expect.poll(() => page.locator('.result.rejected').allTextContents(), { timeout: 30_000 }).toEqual([expect.stringContaining('Not that file')]);
    await expect.poll(() => page.$('#confirmation'), { timeout: 10_000 }).toBeNull();
    const files = await svc.api<string[]>('GET', `/api/v1/app-conversations/${convId}/files`);
    expect(files.body).not.toContain('rejected.txt');

    llm.push(
      { toolCalls: [{ name: 'terminal', arguments: { command: 'echo approved-and-ran | tee approved.txt', summary: 'write approved.txt' } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'Wrote approved.txt.' } }] },
    );
    await page.fill('#followup', 'Then write approved.txt');
    await page.click('.followup button[type=submit]');
    await page.waitForSelector('#confirmation', { timeout: 60_000 });
    await page.click('#confirmation button:text-is("Approve")');
    await expect.poll(() => page.locator('.result.observation').allTextContents(), { timeout: 60_000 }).toEqual(expect.arrayContaining([expect.stringContaining('approved-and-ran')]));
    await expect.poll(() => page.textContent('#execution-status'), { timeout: 30_000 }).toBe('finished');
    await page.selectOption('#confirmation-policy', 'NeverConfirm');
    await expectEachEventOnceInOrder();
  }, 180_000);

  it('the workspace: files, a file, Git changes and the diff', async () => {
    await page.click('#workspace-tab');
    await expect.poll(() => page.locator('#files li').allTextContents(), { timeout: 30_000 }).toEqual(expect.arrayContaining(['hello.txt', 'approved.txt']));
    await page.click('#files button:text-is("hello.txt")');
    // (The whole panel: an error it shows instead is what a failure reports.)
    await expect.poll(() => page.locator('.workspace').textContent(), { timeout: 10_000 }).toContain('hello-from-the-web-app');
    expect(await page.textContent('#file-content')).toBe('hello-from-the-web-app\n');
    await shot('workspace-file');
    await expect.poll(() => page.locator('#changes li').allTextContents(), { timeout: 30_000 }).toEqual(expect.arrayContaining([expect.stringMatching(/ADDED\s*hello\.txt/)]));
    await page.click('#changes button:text-is("hello.txt")');
    await expect.poll(() => page.locator('#diff .add').allTextContents(), { timeout: 10_000 }).toEqual(['+ hello-from-the-web-app\n']);
    await shot('workspace-diff');
    await page.click('button[role=tab]:text-is("Transcript")');
  });

  it('renames (a bad title beside the field), downloads the trajectory, forks', async () => {
    const id = openId();
    await page.click('#conversation-title button:text-is("Rename")');
    await page.fill('#title-input', 'x'.repeat(201));
    await page.click('.rename button[type=submit]');
    await expect.poll(() => page.textContent('#title-error').catch(() => null)).toBeTruthy();
    await page.fill('#title-input', 'Hello from the web app');
    await page.click('.rename button[type=submit]');
    await expect.poll(() => page.textContent('#conversation-title'), { timeout: 10_000 }).toContain('Hello from the web app');
    const { body: [record] } = await svc.api<{ title: string }[]>('GET', `/api/v1/app-conversations?ids=${id}`);
    expect(record!.title).toBe('Hello from the web app');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:text-is("Download trajectory")')]);
    const zip = readFileSync((await download.path())!);
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    expect(download.suggestedFilename()).toMatch(/\.zip$/);

    const sourceRows = await page.locator('#transcript li.ev').count();
    await page.click('#fork');
    await page.waitForURL((u) => /#\/c\/[0-9a-f]{32}$/.test(u.hash) && !u.hash.includes(id), { timeout: 60_000 });
    const forkId = openId();
    await expect.poll(() => page.textContent('#conversation-title'), { timeout: 30_000 }).toContain('Fork of Hello from the web app');
    // The fork holds the source's transcript, and goes on by itself; the source is not changed.
    await expect.poll(() => page.locator('#transcript li.ev').count(), { timeout: 60_000 }).toBe(sourceRows);
    llm.push({ content: 'Only in the fork.', toolCalls: [{ name: 'finish', arguments: { message: 'Forked fine.' } }] });
    await page.fill('#followup', 'Say something in the fork');
    await page.click('.followup button[type=submit]');
    await expect.poll(() => page.locator('#transcript').textContent(), { timeout: 60_000 }).toContain('Only in the fork.');
    await shot('fork');
    const sourceEvents = await svc.api<{ items: { llm_message?: { content: { text: string }[] } }[] }>('GET', `/api/v1/conversation/${id}/events/search?limit=100&kind__eq=MessageEvent`);
    expect(JSON.stringify(sourceEvents.body.items)).not.toContain('Only in the fork.');
    await page.goto(`${svc.url}/#/c/${id}`);
    await expect.poll(() => page.textContent('#conversation-title'), { timeout: 10_000 }).toContain('Hello from the web app');
    expect(forkId).not.toBe(id);
  }, 180_000);

  it('pause closes the live feed; resume reconnects it and it goes on after the last event seen', async () => {
    const before = await page.locator('#transcript li.ev').count();
    const users = await page.locator('.ev.role-user').count();
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

    const ids = await page.locator('#transcript li.ev').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-id')));
    expect(ids.length).toBeGreaterThan(before);
    expect(await page.locator('.ev.role-user').count()).toBe(users + 2);
    await expectEachEventOnceInOrder();
  }, 180_000);

  it('lists the conversation with its live status', async () => {
    await page.click('text=← Conversations');
    const row = page.locator('#conversations tbody tr').first();
    await expect.poll(() => row.locator('.sandbox-status').textContent(), { timeout: 30_000 }).toBe('RUNNING');
    await expect.poll(() => row.locator('.execution-status').textContent(), { timeout: 30_000 }).toBe('finished');
    await shot('conversations');

    await page.fill('#search', 'no such title');
    await expect.poll(() => page.textContent('#no-conversations').catch(() => null), { timeout: 10_000 }).toContain('No conversation title contains');
    await page.fill('#search', 'fork of');
    await expect.poll(() => page.locator('#conversations tbody tr').count(), { timeout: 10_000 }).toBe(1);
    await page.fill('#search', 'hello from the web');
    await expect.poll(() => page.locator('#conversations tbody tr').count(), { timeout: 10_000 }).toBe(2);

    // Status changes made elsewhere (here: the API) show up without a reload.
    const sandbox = (await svc.api<{ sandbox_id: string }[]>('GET', `/api/v1/app-conversations?ids=${await row.getAttribute('data-id')}`)).body[0]!.sandbox_id;
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/pause`)).status).toBe(200);
    await expect.poll(() => page.locator('#conversations .sandbox-status').allTextContents(), { timeout: 60_000 }).toEqual(['PAUSED', 'PAUSED']);
    expect((await svc.api('POST', `/api/v1/sandboxes/${sandbox}/resume`)).status).toBe(200);
    await expect.poll(() => page.locator('#conversations .sandbox-status').allTextContents(), { timeout: 60_000 }).toEqual(['RUNNING', 'RUNNING']);
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
