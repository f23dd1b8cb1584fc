// GET /api/file/download-trajectory/{id} over HTTP after a real run (real agent, real shell, the
// scripted model): the zip holds meta.json, base_state.json, every event in order and the files of
// the conversation's directory, and no secret; unknown and deleted conversations are 404.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strFromU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { eventually, TEST_KEY, useRealAgentServer, userText } from '../test-support.ts';

const t = useRealAgentServer({ createAgent });

async function download(id: string): Promise<Response> {
  return fetch(`${t.s.url}/api/file/download-trajectory/${id}`, { headers: { 'x-session-api-key': TEST_KEY } });
}

describe('download-trajectory', () => {
  it('zips the persisted events, meta and state of a conversation, with no secret in them', async () => {
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') },
      agent: { llm: { model: 'openai/scripted', api_key: 'sk-model-secret' }, tools: [{ name: 'terminal' }] },
      secrets: { DEPLOY_TOKEN: { kind: 'StaticSecret', value: 'tok-trajectory-secret' } },
      tags: { team: 'core' },
    };
    const id: string = (await t.s.api('/api/conversations', { method: 'POST', body })).body.id;
    t.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo "$DEPLOY_TOKEN" | wc -c; echo traj-$((20+3))' } }] }, { content: 'All done.' });
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('run it', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    // A file the conversation keeps in its own directory (where browser recordings go).
    const own = join(t.dir.path, 'data', 'conversations', id);
    mkdirSync(join(own, 'browser_recordings'), { recursive: true });
    writeFileSync(join(own, 'browser_recordings', 'trace.zip'), 'recorded');

    const res = await download(id);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toContain(`${id.replaceAll('-', '')}.zip`);
    const files = unzipSync(new Uint8Array(await res.arrayBuffer()));
    const text = (name: string) => {
      if (!files[name]) throw new Error(`${name} is not in the zip`);
      return strFromU8(files[name]);
    };

    const events = (await t.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
    const eventFiles = Object.keys(files).filter((f) => f.startsWith('events/')).sort();
    expect(eventFiles).toEqual(events.map((e, i) => `events/event-${String(i).padStart(5, '0')}-${e.id}.json`));
    expect(eventFiles.map((f) => JSON.parse(text(f)).kind)).toEqual(events.map((e) => e.kind));
    expect(eventFiles.some((f) => text(f).includes('traj-23'))).toBe(true);
    expect(JSON.parse(text('meta.json'))).toMatchObject({ id, tags: { team: 'core' }, workspace: { working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted', api_key: null } } });
    expect(JSON.parse(text('base_state.json'))).toMatchObject({ id, execution_status: 'finished' });
    expect(text('browser_recordings/trace.zip')).toBe('recorded');
    const all = Object.keys(files).map(text).join('\n');
    expect(all).not.toContain('sk-model-secret');
    expect(all).not.toContain('tok-trajectory-secret');
    expect(all).not.toContain(TEST_KEY); // the sandbox's live session key
    expect(all).toContain('DEPLOY_TOKEN');

    expect((await download('00000000-0000-0000-0000-000000000000')).status).toBe(404);
    expect((await download('not-a-uuid')).status).toBe(422);
    await t.s.api(`/api/conversations/${id}`, { method: 'DELETE' });
    expect((await download(id)).status).toBe(404);
  });
});
