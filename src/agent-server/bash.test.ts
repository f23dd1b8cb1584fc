// The one-shot command API over real HTTP and WebSocket, with real processes.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually, FrameCollector, startTestServer, tempDir, TEST_KEY, type TestServer } from './test-support.ts';

let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeEach(async () => {
  dir = tempDir();
  s = await startTestServer(dir.path, { tuning: { bash: { maxChunkChars: 100, killGraceMs: 200 }, sockets: { authTimeoutMs: 2000 } } });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

const HEX = /^[0-9a-f]{32}$/;
const exec = (body: unknown) => s.api('/api/bash/execute_bash_command', { method: 'POST', body });

describe('/api/bash', () => {
  it('execute_bash_command returns the final output with the exit code even after more than 100 chunks', async () => {
    // 150 lines of 100 characters: 150+ chunks of at most 100 characters.
    const res = await exec({ command: 'for i in $(seq 1 150); do printf "%099d\\n" $i; done; echo tail-line; exit 3', timeout: 60 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ kind: 'BashOutput', exit_code: 3 });
    expect(res.body.id).toMatch(HEX);
    expect(res.body.command_id).toMatch(HEX);
    expect(res.body.order).toBeGreaterThan(100);
    // The whole output, every chunk joined (OpenHands 1.58), not only the last chunk's.
    expect(res.body.stdout).toBe(Array.from({ length: 150 }, (_, i) => `${String(i + 1).padStart(99, '0')}\n`).join('') + 'tail-line\n');
    const all = [];
    for (let page: string | null = null; ; ) {
      const q: string = `command_id__eq=${res.body.command_id}&kind__eq=BashOutput&limit=100${page ? `&page_id=${page}` : ''}`;
      const p = (await s.api(`/api/bash/bash_events/search?${q}`)).body;
      all.push(...p.items);
      if (!p.next_page_id) break;
      page = p.next_page_id;
    }
    expect(all.map((o: any) => o.order)).toEqual([...all.keys()]);
    expect(all.every((o: any) => (o.stdout ?? '').length <= 100)).toBe(true);
    expect(all.slice(0, -1).every((o: any) => o.exit_code === null)).toBe(true);
    const text = all.map((o: any) => o.stdout ?? '').join('');
    expect(text.split('\n').filter(Boolean)).toHaveLength(151);
    expect(text.endsWith('tail-line\n')).toBe(true);
  });

  it('runs in the workspace by default (or cwd), with stderr, and a minimal environment', async () => {
    const res = await exec({ command: 'pwd; echo oops >&2; echo "key=${OH_SECRET_KEY:-unset}"' });
    expect(res.body.stdout).toBe(`${dir.path}/workspace\nkey=unset\n`);
    expect(res.body.stderr).toBe('oops\n');
    expect((await exec({ command: 'pwd', cwd: '/tmp' })).body.stdout).toBe('/tmp\n');
    expect((await exec({ command: 'pwd', cwd: '/no/such/dir' })).body).toMatchObject({ exit_code: -1, stderr: expect.stringContaining('/no/such/dir does not exist') });
    expect((await exec({ cwd: '/tmp' })).status).toBe(422);
  });

  it("masks the secrets of the loaded conversations in every output, and exports none of them, even named", async () => {
    const created = await s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: 'c' }, agent: { llm: { model: 'm' } }, secrets: { DEPLOY_TOKEN: { kind: 'StaticSecret', value: 'tok-4f9a-very-secret' } } } });
    expect(created.status).toBe(201);
    const out = (await exec({ command: 'echo "token tok-4f9a-very-secret"; echo tok-4f9a-very-secret >&2' })).body;
    expect(out).toMatchObject({ stdout: 'token <secret-hidden>\n', stderr: '<secret-hidden>\n' });
    expect(JSON.stringify((await s.api('/api/bash/bash_events/search')).body)).not.toContain('tok-4f9a');
    expect((await exec({ command: 'echo "[$DEPLOY_TOKEN]"' })).body).toMatchObject({ stdout: '[]\n', exit_code: 0 });
  });

  it('a command past its timeout is stopped with its whole process group: SIGTERM, then SIGKILL; exit_code -1', async () => {
    const res = await exec({ command: 'trap "" TERM; echo started; sleep 30 & sleep 30; echo never', timeout: 1 });
    expect(res.body).toMatchObject({ exit_code: -1, stdout: 'started\n' });
  });

  it('start_bash_command answers at once; search filters, pages, sorts; get, batch get and clear', async () => {
    const started = await s.api('/api/bash/start_bash_command', { method: 'POST', body: { command: 'echo one' } });
    expect(started.body).toMatchObject({ kind: 'BashCommand', command: 'echo one', cwd: null, timeout: 300 });
    expect(started.body.id).toMatch(HEX);
    const cmdId = started.body.id;
    const final = await eventually(async () => (await s.api(`/api/bash/bash_events/search?command_id__eq=${cmdId}&kind__eq=BashOutput`)).body.items.find((o: any) => o.exit_code !== null));
    expect(final).toMatchObject({ command_id: cmdId, stdout: 'one\n', exit_code: 0 });
    await exec({ command: 'echo two' });

    const commands = (await s.api('/api/bash/bash_events/search?kind__eq=BashCommand')).body.items;
    expect(commands.map((c: any) => c.command)).toEqual(['echo one', 'echo two']);
    const desc = (await s.api('/api/bash/bash_events/search?kind__eq=BashCommand&sort_order=TIMESTAMP_DESC&limit=1')).body;
    expect(desc.items.map((c: any) => c.command)).toEqual(['echo two']);
    expect((await s.api(`/api/bash/bash_events/search?kind__eq=BashCommand&sort_order=TIMESTAMP_DESC&limit=1&page_id=${desc.next_page_id}`)).body.items[0].command).toBe('echo one');
    // A dashed UUID names the same command; order__gt polls for newer output only.
    const dashed = `${cmdId.slice(0, 8)}-${cmdId.slice(8, 12)}-${cmdId.slice(12, 16)}-${cmdId.slice(16, 20)}-${cmdId.slice(20)}`;
    expect((await s.api(`/api/bash/bash_events/search?command_id__eq=${dashed}&order__gt=0`)).body.items).toEqual([]);
    const future = new Date(Date.now() + 60_000).toISOString();
    expect((await s.api(`/api/bash/bash_events/search?timestamp__gte=${future}`)).body.items).toEqual([]);
    expect((await s.api(`/api/bash/bash_events/search?timestamp__lt=${future}`)).body.items.length).toBe(4);
    expect((await s.api('/api/bash/bash_events/search?limit=101')).status).toBe(422);
    expect((await s.api('/api/bash/bash_events/search?sort_order=SIDEWAYS')).status).toBe(422);

    expect((await s.api(`/api/bash/bash_events/${cmdId}`)).body).toEqual(started.body);
    expect((await s.api(`/api/bash/bash_events/${'0'.repeat(32)}`)).status).toBe(404);
    const batch = await s.api('/api/bash/bash_events/', { body: [cmdId, 'nope', final.id] });
    expect(batch.body).toEqual([started.body, null, final]);

    expect((await s.api('/api/bash/bash_events', { method: 'DELETE' })).body).toEqual({ cleared_count: 4 });
    expect((await s.api('/api/bash/bash_events/search')).body).toEqual({ items: [], next_page_id: null });
    expect((await s.api('/api/bash/bash_events/search', { key: null })).status).toBe(401);
  });

  it('events survive a restart of the agent server', async () => {
    const out = (await exec({ command: 'echo kept' })).body;
    await s.close();
    s = await startTestServer(dir.path);
    expect((await s.api(`/api/bash/bash_events/${out.id}`)).body).toEqual(out);
  });
});

describe('/sockets/bash-events', () => {
  const url = () => `${s.url.replace('http', 'ws')}/sockets/bash-events`;

  it('authenticates with a first frame, replays with resend_mode=all, streams live events and runs frames as commands', async () => {
    await exec({ command: 'echo before' });
    const ws = new FrameCollector(`${url()}?resend_mode=all`);
    await ws.opened;
    ws.ws.send(JSON.stringify({ type: 'auth', session_api_key: TEST_KEY }));
    await ws.until(2);
    expect(ws.frames.map((f) => f.kind)).toEqual(['BashCommand', 'BashOutput']);
    ws.ws.send(JSON.stringify({ command: 'echo from-socket' }));
    const frames = await ws.until((f) => f.some((e) => e.kind === 'BashOutput' && e.stdout === 'from-socket\n'));
    expect(frames.slice(2).map((f) => f.kind)).toEqual(['BashCommand', 'BashOutput']);
    ws.ws.send('not json');
    ws.ws.send(JSON.stringify({ cwd: '/tmp' }));
    await ws.until((f) => f.filter((e) => e.kind === 'BashError').length === 2);
    expect(ws.frames.filter((e) => e.kind === 'BashError').map((e) => e.code)).toEqual(['JSONDecodeError', 'Invalid']);
    await ws.close();
  });

  it('without resend only live events; a wrong key closes with 4001', async () => {
    await exec({ command: 'echo old' });
    const ws = new FrameCollector(url(), { 'x-session-api-key': TEST_KEY });
    await ws.opened;
    await exec({ command: 'echo new' });
    await ws.until(2);
    expect(ws.frames.map((f) => f.command ?? f.stdout)).toEqual(['echo new', 'new\n']);
    await ws.close();

    const bad = new FrameCollector(url());
    await bad.opened;
    bad.ws.send(JSON.stringify({ type: 'auth', session_api_key: 'wrong' }));
    expect((await bad.done).code).toBe(4001);
  });
});
