// What an installed skill or plugin does to a conversation (OpenHands 1.58: installed skills load
// as user skills, installed plugins as ambient plugins of every conversation), through the agent
// server with the real agent and a scripted model; and that disabling one takes it out again.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createAgent } from '../agent.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../testing/scripted-llm/server.ts';
import { eventually, startTestServer, tempDir, userText, type TestServer } from '../../agent-server/test-support.ts';

let llm: ScriptedLlm;
let dir: ReturnType<typeof tempDir>;
let s: TestServer;

beforeAll(async () => (llm = await startScriptedLlm()));
afterAll(() => llm.close());
beforeEach(async () => {
  dir = tempDir('installed-conv-');
  // The server's home (not the process's): its routes and its conversations read the same skills and plugins.
  s = await startTestServer(dir.path, { createAgent, home: join(dir.path, 'home'), llmDefaults: { model: 'openai/scripted', baseUrl: llm.url, apiKey: 'sk-default' } });
});
afterEach(async () => {
  await s.close();
  dir.remove();
});

function write(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

async function converse(text: string): Promise<{ items: any[]; prompt: string }> {
  let prompt = '';
  llm.push((req) => ((prompt = JSON.stringify(req.messages)), { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] }));
  const body = { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'project') }, agent: { llm: { model: 'openai/scripted' }, agent_context: { load_user_skills: true } } };
  const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id as string;
  await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) });
  await eventually(async () => ['finished', 'error'].includes((await s.api(`/api/conversations/${id}`)).body.execution_status), 20_000);
  return { items: (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items, prompt };
}

describe('installed skills and plugins in conversations', () => {
  it('load while enabled, and not once disabled', async () => {
    const src = join(dir.path, 'src');
    write(join(src, 'pdf-tools', 'SKILL.md'), '---\nname: pdf-tools\ndescription: Work with PDF files\n---\nUse qpdf.\n');
    write(join(src, 'city-weather', '.plugin', 'plugin.json'), JSON.stringify({ name: 'city-weather', description: 'Weather' }));
    write(join(src, 'city-weather', 'commands', 'now.md'), '---\ndescription: Weather now\n---\nSay the weather in Lisbon is sunny.\n');
    write(join(src, 'city-weather', 'skills', 'forecast', 'SKILL.md'), '---\nname: forecast\ndescription: Five-day forecasts\n---\nForecast.\n');
    mkdirSync(join(dir.path, 'project'), { recursive: true });
    expect((await s.api('/api/skills/install', { method: 'POST', body: { source: join(src, 'pdf-tools') } })).status).toBe(200);
    expect((await s.api('/api/plugins/install', { method: 'POST', body: { source: join(src, 'city-weather') } })).status).toBe(200);

    const on = await converse('/city-weather:now please');
    expect(on.items.find((e) => e.kind === 'ConversationErrorEvent')).toBeUndefined();
    const msg = on.items.find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    expect(msg.activated_skills).toEqual(['city-weather:now']);
    expect(JSON.stringify(msg.extended_content)).toContain('sunny');
    expect(on.prompt).toContain('pdf-tools');
    expect(on.prompt).toContain('forecast');

    await s.api('/api/skills/installed/pdf-tools', { method: 'PATCH', body: { enabled: false } });
    await s.api('/api/plugins/installed/city-weather', { method: 'PATCH', body: { enabled: false } });
    const off = await converse('/city-weather:now please');
    expect(off.items.find((e) => e.kind === 'MessageEvent' && e.source === 'user').activated_skills ?? []).toEqual([]);
    expect(off.prompt).not.toContain('pdf-tools');
    expect(off.prompt).not.toContain('Five-day forecasts');
  });
});
