// The critic's own key (`agent.critic.api_key`, which 1.58 requires) through the agent server: taken,
// never stored in plain text nor shown (null, as 1.58 shows it), sealed with the conversation's
// secrets so that a restarted server still sends it to the classification service.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { CRITIC_LABELS } from '../agent/critic/critic.ts';
import { eventually, useRealAgentServer } from './test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'critic-key-test-secret' }) });
const CRITIC_KEY = 'sk-critic-own-key-7c1e';

/** Every file under `dir` (the data dir: SQLite and its journal, event files). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe("the critic's own key", () => {
  it('is sealed (shown null, nowhere on disk in plain text) and sent as the Bearer after a restart', async () => {
    const critic = { kind: 'APIBasedCritic', server_url: t.llm.url.replace(/\/v1$/, '/vllm'), api_key: CRITIC_KEY };
    const r = await t.s.api('/api/conversations', { method: 'POST', body: { agent: { llm: { model: 'openai/scripted', base_url: t.llm.url, api_key: 'sk-llm' }, critic }, workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') } } });
    expect(r.status).toBe(201);
    expect(r.body.agent.critic).toMatchObject({ server_url: critic.server_url, api_key: null, mode: 'finish_and_message' });
    expect(filesUnder(t.dir.path).filter((f) => readFileSync(f).includes(CRITIC_KEY))).toEqual([]);

    await t.restart();
    expect((await t.s.api(`/api/conversations/${r.body.id}`)).body.agent.critic.api_key).toBeNull();
    t.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    t.llm.pushClassification(CRITIC_LABELS.map((l) => (l === 'success' ? 0.9 : 0.05)));
    await t.s.api(`/api/conversations/${r.body.id}/events`, { method: 'POST', body: { role: 'user', content: [{ type: 'text', text: 'finish' }], run: true } });
    await eventually(async () => (await t.s.api(`/api/conversations/${r.body.id}`)).body.execution_status === 'finished', 15_000);
    expect(t.llm.classifications.map((c) => c.headers['authorization'])).toEqual([`Bearer ${CRITIC_KEY}`]);
    const events = (await t.s.api(`/api/conversations/${r.body.id}/events/search?limit=100`)).body.items;
    expect(events.find((e: any) => e.kind === 'ActionEvent')?.critic_result?.score).toBe(0.9);
  });
});
