// The SDK's RemoteWorkspace.get_secrets() flow with the real agent: a secret stored at
// /api/settings/secrets, handed to a conversation as a LookupSecret of this server's own URL (with
// the session key), reaches the terminal command that names it, masked in what comes back. A
// lookup of another server stays 501; one of ours naming nothing is a 422 at the secret.
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createAgent } from '../agent/agent.ts';
import { eventually, TEST_KEY, userText, useRealAgentServer } from './test-support.ts';

const ctx = useRealAgentServer({ createAgent });

const lookup = (url: string, key = TEST_KEY) => ({ kind: 'LookupSecret', url, headers: { 'X-Session-API-Key': key } });
const start = (secrets: Record<string, unknown>) =>
  ctx.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(ctx.dir.path, 'w') }, agent: { llm: { model: 'openai/scripted' }, tools: [{ name: 'terminal' }] }, secrets } });

describe('LookupSecret of this server\'s /api/settings/secrets', () => {
  it('gives the stored value to the command that names it, masked in the observation', async () => {
    expect((await ctx.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'GITHUB_TOKEN', value: 'ghp_stored0123456789' } })).status).toBe(200);
    // Any host: a client reaches the sandbox through its public address; the session key says it is this server.
    const created = await start({ GITHUB_TOKEN: lookup('https://sandbox-1.example.com/api/settings/secrets/GITHUB_TOKEN') });
    expect(created.status).toBe(201);
    const id = created.body.id;
    ctx.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$GITHUB_TOKEN" | wc -c; echo "token=$GITHUB_TOKEN"' } }] }, { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] });
    await ctx.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('use the token', true) });
    await eventually(async () => (await ctx.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    const obs = (await ctx.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.map((e: any) => e.observation).filter((o: any) => o.kind === 'TerminalObservation');
    expect(obs[0].content[0].text.split('\n')).toEqual(['20', 'token=<secret-hidden>']);
    expect(JSON.stringify(obs)).not.toContain('ghp_stored0123456789');
    // The stored request keeps no value, and no URL or key either.
    expect(JSON.stringify((await ctx.s.api(`/api/conversations/${id}`)).body)).not.toMatch(/ghp_stored|example\.com/);
  });

  it('update_secrets takes a lookup too; one naming no stored secret is a 422 at the secret', async () => {
    await ctx.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'NPM_TOKEN', value: 'npm_stored456' } });
    const id = (await start({})).body.id;
    expect((await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { NPM_TOKEN: lookup(`${ctx.s.url}/api/settings/secrets/NPM_TOKEN`) } } })).status).toBe(200);
    const missing = await ctx.s.api(`/api/conversations/${id}/secrets`, { method: 'POST', body: { secrets: { OTHER: lookup(`${ctx.s.url}/api/settings/secrets/OTHER`) } } });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'secrets', 'OTHER'], msg: 'Secret not found' });
  });

  it('leaves lookups of other servers not built (501), also our path with another key', async () => {
    await ctx.s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'T', value: 'v-stored' } });
    for (const secret of [lookup('https://vault.example.com/v1/secret/T'), lookup(`${ctx.s.url}/api/settings/secrets/T`, 'someone-elses-key')]) {
      const r = await start({ T: secret });
      expect(r.status).toBe(501);
      expect(r.body.detail).toMatch(/LookupSecret/);
    }
  });
});
