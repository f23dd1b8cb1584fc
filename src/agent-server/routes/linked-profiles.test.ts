// LLM profiles linked to a provider connection (/api/llm/provider-connections), over HTTP with the
// real agent: a linked profile runs with the connection's key and base URL read at use (a rotated key
// reaches the next switch); a connection a profile uses is not deleted (409), and a profile whose
// connection is gone says so (400), never calling the model without a key.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { eventually, useOtherScriptedLlm, useRealAgentServer, userText } from '../test-support.ts';

const t = useRealAgentServer({ createAgent, overrides: () => ({ secretKey: 'provider-connections-test-key' }) });
const other = useOtherScriptedLlm();

const KEY1 = 'sk-connection-key-one';
const KEY2 = 'sk-connection-key-two';
const P = '/api/llm/provider-connections';

describe('LLM profiles linked to a provider connection', () => {
  it("a linked profile runs with the connection's key and base URL, read at use; a used connection is not deleted; a gone one is named", async () => {
    const id = (await t.s.api(P, { method: 'POST', body: { display_name: 'Team', api_key: KEY1, base_url: other.llm.url } })).body.id;
    // Linked: its own key and base URL are not kept.
    expect((await t.s.api('/api/profiles/linked', { method: 'POST', body: { llm: { model: 'openai/linked-model', api_key: 'sk-inline', base_url: 'http://127.0.0.1:9', provider_connection_id: id } } })).status).toBe(201);
    expect((await t.s.api('/api/profiles')).body.profiles).toEqual([{ name: 'linked', model: 'openai/linked-model', base_url: null, provider_connection_id: id, provider_connection_broken: false, api_key_set: true }]);
    expect((await t.s.api('/api/profiles/linked')).body.config).toMatchObject({ provider_connection_id: id, api_key: null, base_url: null });

    const conv = (await t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'wd') }, agent: { llm: { model: 'openai/scripted' } } } })).body.id;
    const runOnce = async (text: string) => {
      await t.s.api(`/api/conversations/${conv}/events`, { method: 'POST', body: userText(text, true) });
      await eventually(async () => (await t.s.api(`/api/conversations/${conv}`)).body.execution_status === 'finished', 15_000);
    };
    expect((await t.s.api(`/api/conversations/${conv}/switch_profile`, { method: 'POST', body: { profile_name: 'linked' } })).status).toBe(200);
    other.llm.push((req) => {
      expect(req.model).toBe('linked-model');
      expect(req.headers['authorization']).toBe(`Bearer ${KEY1}`);
      return { content: 'with the connection key' };
    });
    await runOnce('one');

    // Rotated: the next switch (and activation, and the gateway) read the new key.
    await t.s.api(`${P}/${id}`, { method: 'PATCH', body: { api_key: KEY2 } });
    await t.s.api(`/api/conversations/${conv}/switch_profile`, { method: 'POST', body: { profile_name: 'linked' } });
    other.llm.push((req) => {
      expect(req.headers['authorization']).toBe(`Bearer ${KEY2}`);
      return { content: 'with the rotated key' };
    });
    await runOnce('two');

    const refused = await t.s.api(`${P}/${id}`, { method: 'DELETE' });
    expect(refused).toEqual({ status: 409, body: { detail: 'Provider connection cannot be deleted while it is referenced by LLM profile(s): linked. Update those references before deleting it.' } });

    // A connection gone behind the profile's back (deleted before the link was saved again).
    await t.s.api('/api/profiles/dangling', { method: 'POST', body: { llm: { model: 'openai/x', provider_connection_id: 'feedfacefeedfacefeedfacefeedface' } } });
    expect((await t.s.api('/api/profiles')).body.profiles.find((p: any) => p.name === 'dangling')).toMatchObject({ provider_connection_broken: true, api_key_set: false });
    const dangling = await t.s.api(`/api/conversations/${conv}/switch_profile`, { method: 'POST', body: { profile_name: 'dangling' } });
    expect(dangling.status).toBe(400);
    expect(dangling.body.detail).toMatch(/references provider connection 'feedfacefeedfacefeedfacefeedface', which does not exist/);
    const conversations = JSON.stringify([(await t.s.api(`/api/conversations/${conv}`)).body, (await t.s.api(`/api/conversations/${conv}/events/search?limit=100`)).body]);
    expect(conversations).not.toContain(KEY1);
    expect(conversations).not.toContain(KEY2);
  });
});
