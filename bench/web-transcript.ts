// The web app's transcript at 10,000 events in a real Chromium (issue #15): a facade (SQLite) and a
// real agent server whose conversation holds 10,000 events (messages, tool calls with their
// observations), pushed to the app's event log by the sink as in production. The page opens the
// conversation and the figures are, from navigation start: the first transcript row painted, and
// the last stored event shown (the whole history read and rendered); then the latency of a live
// append (agent emit → row in the DOM, through the facade's relay), p50 and p95 of 50; and how
// many rows the page keeps mounted (windowing).
// Run alone: `node bench/web-transcript.ts`; part of `make bench`. Skipped without /usr/bin/chromium.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from 'playwright-core';
import type { AgentHost, CreateAgent } from '../src/agent/types.ts';
import { API_VERSION, LABEL_OWNER, LABEL_START_TASK } from '../src/api/meta.ts';
import { ConversationKind } from '../src/api/conversation.ts';
import { newEventBase, parseEvent, type Event } from '../src/api/events/index.ts';
import { SandboxKind } from '../src/api/sandbox.ts';
import { SecretKind } from '../src/api/secret.ts';
import { startAgentServer } from '../src/agent-server/server.ts';
import { systemClock } from '../src/controller/clock.ts';
import { SqliteAppStore, startApiServer } from '../src/facade/index.ts';
import { eventSinkUrl } from '../src/facade/routes/webhooks.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { createLogger } from '../src/util/log.ts';

type Record = (name: string, value: number, unit: string, note?: string) => void;

const CHROMIUM = '/usr/bin/chromium';
const N = 10_000;
const NS = 'default';
const KEY = 'bench-session-key';

/** N stored events as an agent makes them: a user message, then tool calls with observations and an answer. */
function conversationEvents(n: number): Event[] {
  const out: Event[] = [];
  for (let i = 0; out.length < n; i++) {
    const call = `call-${i}`;
    const action = parseEvent({
      ...newEventBase('agent'),
      kind: 'ActionEvent',
      thought: [{ type: 'text', text: `Step ${i}: looking at the next file.` }],
      action: { kind: 'ThinkAction', thought: `thinking ${i}` },
      tool_name: 'think',
      tool_call_id: call,
      tool_call: { id: call, name: 'think', arguments: '{}', origin: 'completion' },
      llm_response_id: `r-${i}`,
      summary: `step ${i}`,
    });
    const observation = parseEvent({
      ...newEventBase('environment'),
      kind: 'ObservationEvent',
      tool_name: 'think',
      tool_call_id: call,
      action_id: action.id,
      observation: { kind: 'ThinkObservation', content: [{ type: 'text', text: `Your thought ${i} has been logged.` }] },
    });
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const message = parseEvent({ ...newEventBase(role === 'user' ? 'user' : 'agent'), kind: 'MessageEvent', llm_message: { role, content: [{ type: 'text', text: `message ${i}` }] }, llm_response_id: `m-${i}` });
    out.push(message, action, observation);
  }
  return out.slice(0, n);
}

async function until(check: () => Promise<boolean>, what: string, capMs = 120_000): Promise<void> {
  const deadline = Date.now() + capMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`web-transcript bench: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function benchWebTranscript(record: Record): Promise<void> {
  if (!existsSync(CHROMIUM)) {
    record('web transcript', 0, 'skipped', `chromium missing at ${CHROMIUM}`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'agentyard-web-bench-'));
  const store = new SqliteStore(join(dir, 'store.db'), { clock: systemClock });
  const db = new SqliteAppStore(join(dir, 'app.db'));
  const log = createLogger('bench', 'error');
  const api = await startApiServer({ store, db, clock: systemClock, namespace: NS, settings: { capacity: 10 }, port: 0, host: '127.0.0.1', log });
  const hosts: AgentHost[] = [];
  const createAgent: CreateAgent = (host) => {
    hosts.push(host);
    return { run: async () => {}, close: async () => {} };
  };
  const agent = await startAgentServer({ port: 0, workspaceDir: join(dir, 'ws'), dataDir: join(dir, 'as-data'), sessionKeys: [KEY], createAgent, log, sink: { url: eventSinkUrl(api.url, 'sb'), key: KEY } });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'] });
  try {
    const user = await db.createUser('bench');
    const key = await db.createApiKey(user.id);
    const id = 'b'.repeat(32);
    // Playing the controller: a RUNNING sandbox (this agent server) and a READY conversation on it.
    await store.create(SandboxKind, { apiVersion: API_VERSION, kind: 'Sandbox', metadata: { name: 'sb', namespace: NS, labels: { [LABEL_OWNER]: user.id } }, spec: { owner: user.id, paused: false } });
    const sb = (await store.get(SandboxKind, NS, 'sb'))!;
    await store.updateStatus(SandboxKind, { ...sb, status: { phase: 'RUNNING', url: agent.url } });
    await store.create(SecretKind, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sb-session', namespace: NS }, data: { key: Buffer.from(KEY).toString('base64') } });
    await store.create(ConversationKind, { apiVersion: API_VERSION, kind: 'Conversation', metadata: { name: id, namespace: NS, labels: { [LABEL_OWNER]: user.id, [LABEL_START_TASK]: 'c'.repeat(32), 'agentyard.dev/sandbox': 'sb' } }, spec: { owner: user.id, title: '10,000 events', sandboxName: 'sb' } });
    const conv = (await store.get(ConversationKind, NS, id))!;
    await store.updateStatus(ConversationKind, { ...conv, status: { sandboxName: 'sb', startTask: { status: 'READY' } } });
    const created = await fetch(`${agent.url}/api/conversations`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-api-key': KEY },
      body: JSON.stringify({ conversation_id: id, workspace: { kind: 'LocalWorkspace', working_dir: join(dir, 'ws') }, agent: { llm: { model: 'bench/model' } }, initial_message: { role: 'user', content: [{ type: 'text', text: 'bench' }], run: false } }),
    });
    if (!created.ok) throw new Error(`the agent server answered ${created.status}: ${await created.text()}`);
    await until(async () => hosts.length > 0, 'the agent host');
    const host = hosts[0]!;
    const events = conversationEvents(N);
    for (let i = 0; i < events.length; i += 100) {
      for (const e of events.slice(i, i + 100)) host.emit(e);
      await new Promise((r) => setImmediate(r));
    }
    const headers = { authorization: `Bearer ${key}` };
    await until(async () => Number(await (await fetch(`${api.url}/api/v1/conversation/${id}/events/count`, { headers })).text()) >= N, 'the sink to hold every event');
    const lastId = events.at(-1)!.id;

    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    // Timestamps taken in the page: the first row, the last event, and each watched id's arrival.
    await page.addInitScript({
      content: `sessionStorage.setItem('agentyard.apiKey', ${JSON.stringify(key)});
        window.__marks = {}; window.__watch = new Set([${JSON.stringify(lastId)}]);
        new MutationObserver(() => {
          if (window.__marks.first === undefined && document.querySelector('#transcript li.ev')) window.__marks.first = performance.now();
          for (const w of window.__watch) if (document.querySelector('[data-id="' + w + '"]')) { window.__marks[w] = { at: performance.now(), wall: Date.now() }; window.__watch.delete(w); }
        }).observe(document, { subtree: true, childList: true });`,
    });
    const t0 = performance.now();
    await page.goto(`${api.url}/#/c/${id}`);
    await page.waitForFunction((id) => (globalThis as unknown as { __marks: { [k: string]: unknown } }).__marks[id] !== undefined, lastId, { timeout: 180_000 });
    const wall = performance.now() - t0;
    const marks = await page.evaluate<{ first: number; last: number; mounted: number }>(`({ first: window.__marks.first, last: window.__marks[${JSON.stringify(lastId)}].at, mounted: document.querySelectorAll('#transcript li.ev').length })`);
    record('web transcript: first row painted', marks.first, 'ms', `from navigation start; ${N} events`);
    record('web transcript: whole history shown', marks.last, 'ms', `last of ${N} events in the DOM (${(wall / 1000).toFixed(1)} s wall incl. browser start-up)`);
    record('web transcript: rows mounted', marks.mounted, 'rows', `of ${(await page.evaluate<string>(`document.querySelector('#transcript').dataset.rows`))} (windowed)`);
    await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): { textContent: string } | null } }).document.querySelector('#feed-state')?.textContent === 'live', undefined, { timeout: 30_000 });

    const latencies: number[] = [];
    for (let i = 0; i < 50; i++) {
      const e = parseEvent({ ...newEventBase('agent'), kind: 'MessageEvent', llm_message: { role: 'assistant', content: [{ type: 'text', text: `live ${i}` }] }, llm_response_id: `live-${i}` });
      await page.evaluate(`window.__watch.add(${JSON.stringify(e.id)})`);
      const sent = Date.now();
      host.emit(e);
      await page.waitForFunction((id) => (globalThis as unknown as { __marks: { [k: string]: unknown } }).__marks[id] !== undefined, e.id, { timeout: 10_000, polling: 5 });
      const shown = await page.evaluate<number>(`window.__marks[${JSON.stringify(e.id)}].wall`);
      latencies.push(shown - sent);
    }
    latencies.sort((a, b) => a - b);
    record('web transcript: live append p50', latencies[25]!, 'ms', `agent emit → row in the DOM, at ${N}+ events`);
    record('web transcript: live append p95', latencies[47]!, 'ms');
  } finally {
    await browser.close();
    await agent.close();
    await api.close();
    store.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await benchWebTranscript((name, value, unit, note = '') => console.log(`${name.padEnd(40)} ${`${value.toFixed(value < 10 ? 2 : 0)} ${unit}`.padStart(12)}  ${note}`));
}
