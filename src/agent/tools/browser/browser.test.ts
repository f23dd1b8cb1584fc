// The browser tools through the agent server over HTTP: the scripted model drives the system's
// headless Chromium through a real form on a loopback web server, and records a session.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../agent.ts';
import { eventually, userText, useRealAgentServer } from '../../../agent-server/test-support.ts';
import type { RecordedRequest } from '../../../testing/scripted-llm/server.ts';
import { BrowserSession, findChromium } from './session.ts';

const chromium = findChromium();

const FORM = `<!doctype html><title>Search</title><h1>Find things</h1>
<form action="/result"><input name="q" placeholder="query"><button type="submit">Go</button></form>
<a href="/about">About us</a><div style="display:none"><button>hidden</button></div>`;

function site(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.setHeader('content-type', 'text/html');
    if (url.pathname === '/result') res.end(`<!doctype html><title>Result</title><p>You searched: <b>${url.searchParams.get('q')}</b></p>`);
    else if (url.pathname === '/about') res.end('<!doctype html><title>About</title><p>About page</p>');
    else res.end(FORM);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })));
}

const lastToolText = (req: RecordedRequest) => JSON.stringify(req.messages.findLast((m) => m.role === 'tool')?.content);

describe.skipIf(!chromium)(`browser tools${chromium ? '' : ' (skipped: chromium not installed)'}`, () => {
  const t = useRealAgentServer({ createAgent });
  let web: { url: string; server: Server };
  beforeAll(async () => void (web = await site()));
  afterAll(() => void web.server.close());

  it('navigates, types into a field, clicks, reads the content and lists tabs', async () => {
    const seen: string[] = [];
    t.llm.push(
      { toolCalls: [{ name: 'browser_navigate', arguments: { url: web.url } }] },
      (req) => {
        seen.push(lastToolText(req));
        return { toolCalls: [{ name: 'browser_type', arguments: { index: 0, text: 'otters' } }] };
      },
      { toolCalls: [{ name: 'browser_click', arguments: { index: 1 } }] },
      { toolCalls: [{ name: 'browser_get_content', arguments: {} }] },
      (req) => {
        seen.push(lastToolText(req));
        return { toolCalls: [{ name: 'browser_navigate', arguments: { url: `${web.url}/about`, new_tab: true } }] };
      },
      { toolCalls: [{ name: 'browser_list_tabs', arguments: {} }] },
      (req) => {
        seen.push(lastToolText(req));
        return { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] };
      },
    );
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'project') },
      agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'TerminalTool' }, { name: 'BrowserToolSet' }] },
    };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('search for otters', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 60_000);

    // The page state numbers visible interactive elements only.
    expect(seen[0]).toContain('Current URL: ' + web.url);
    expect(seen[0]).toContain('[0]<input name=\\"q\\" placeholder=\\"query\\">');
    expect(seen[0]).toContain('[1]<button type=\\"submit\\">Go</button>');
    expect(seen[0]).toContain('[2]<a href=\\"/about\\">About us</a>');
    expect(seen[0]).not.toContain('hidden');
    expect(seen[1]).toContain('You searched: **otters**');
    expect(seen[2]).toMatch(/[0-9a-f]{4}: Result .*\/result\?q=otters\\n[0-9a-f]{4}: About .*\/about/);

    const events = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    const system = events.find((e: any) => e.kind === 'SystemPromptEvent');
    expect(system.tools.map((t: any) => t.title ?? t.name)).toEqual(expect.arrayContaining(['browser_navigate', 'browser_click', 'browser_get_content']));
    const actions = events.filter((e: any) => e.kind === 'ActionEvent').map((e: any) => e.action.kind);
    expect(actions).toEqual(['BrowserNavigateAction', 'BrowserTypeAction', 'BrowserClickAction', 'BrowserGetContentAction', 'BrowserNavigateAction', 'BrowserListTabsAction', 'FinishAction']);
    const observations = events.filter((e: any) => e.kind === 'ObservationEvent' && e.observation.kind === 'BrowserObservation');
    expect(observations).toHaveLength(6);
    expect(observations.every((o: any) => o.observation.is_error === false)).toBe(true);
  });

  it('reports a bad element index as an error observation and the run goes on', async () => {
    t.llm.push(
      { toolCalls: [{ name: 'browser_navigate', arguments: { url: web.url } }] },
      { toolCalls: [{ name: 'browser_click', arguments: { index: 99 } }] },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'p2') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'BrowserToolSet' }] } };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('click', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 60_000);
    const events = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    const failed = events.find((e: any) => e.kind === 'ObservationEvent' && e.observation.is_error);
    expect(failed.observation.content[0].text).toContain('No element with index 99');
  });

  it('records pages into a trace zip in the conversation data dir; stop without start and start twice are tool errors', async () => {
    const call = (name: string, args: Record<string, unknown> = {}) => ({ toolCalls: [{ name, arguments: args }] });
    t.llm.push(
      call('browser_stop_recording'),
      call('browser_start_recording'),
      call('browser_start_recording'),
      call('browser_navigate', { url: web.url }),
      call('browser_type', { index: 0, text: 'otters' }),
      call('browser_click', { index: 1 }),
      call('browser_stop_recording'),
      call('browser_stop_recording'),
      call('finish', { message: 'recorded' }),
    );
    const wd = join(t.dir.path, 'project');
    const body = { workspace: { kind: 'LocalWorkspace', working_dir: wd }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'BrowserToolSet' }] } };
    const id = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('record a search', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 60_000);

    const events = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items;
    const actions = events.filter((e: any) => e.kind === 'ActionEvent').map((e: any) => e.action.kind);
    expect(actions.filter((k: string) => k.includes('Recording'))).toEqual(['BrowserStopRecordingAction', 'BrowserStartRecordingAction', 'BrowserStartRecordingAction', 'BrowserStopRecordingAction', 'BrowserStopRecordingAction']);
    const obs = events.filter((e: any) => e.kind === 'ObservationEvent' && /recording/.test(e.tool_name)).map((e: any) => e.observation);
    const text = (o: any) => o.content[0].text as string;
    expect(obs.map((o: any) => o.is_error)).toEqual([true, false, true, false, true]);
    expect(text(obs[0])).toContain('No recording is running; call browser_start_recording first');
    expect(text(obs[2])).toContain('A recording is already running');
    expect(text(obs[4])).toContain('No recording is running');

    const saved = /saved to (\S+\.zip) \((\d+) bytes/.exec(text(obs[3]));
    expect(saved).not.toBeNull();
    const path = saved![1]!;
    const recordings = join(t.dir.path, 'data', 'conversations', id, 'browser_recordings');
    expect(obs[3].full_output_save_dir).toBe(recordings);
    expect(path.startsWith(recordings + '/')).toBe(true);
    expect(path.startsWith(wd)).toBe(false);
    const zip = readFileSync(path);
    expect(zip.length).toBe(Number(saved![2]));
    expect(zip.subarray(0, 2).toString()).toBe('PK');
    // The trace (actions, DOM snapshots) and the screenshots are named in the zip's directory.
    const names = new Set(zip.toString('latin1').match(/trace\.trace|screencast\/page@[0-9a-f]+-\d+\.jpeg|resources\/[0-9a-f]+\.html/g));
    expect(names.has('trace.trace')).toBe(true);
    expect([...names].filter((n) => n.startsWith('screencast/')).length).toBeGreaterThan(0);
    expect([...names].filter((n) => n.startsWith('resources/')).length).toBeGreaterThan(0);

    // Deleting the conversation removes its recordings with it.
    await t.s.api(`/api/conversations/${id}`, { method: 'DELETE' });
    expect(existsSync(path)).toBe(false);
  });

  it('a recording still running when the browser closes is saved', async () => {
    const recordingsDir = join(t.dir.path, 'recordings');
    const session = new BrowserSession(chromium!, { recordingsDir });
    await session.startRecording();
    await (await session.page()).goto(web.url);
    await session.close();
    expect(readdirSync(recordingsDir).filter((f) => /^browser-recording-.*\.zip$/.test(f))).toHaveLength(1);
  });
});

describe('browser session without Chromium', () => {
  it('says the browser is not available instead of pretending', async () => {
    const session = new BrowserSession(null);
    await expect(session.page()).rejects.toThrow(/not available: no Chromium found/);
    await session.close();
  });
});
