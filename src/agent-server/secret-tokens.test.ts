// OpenHands' encrypted wire form of secrets over HTTP with the real agent and the scripted model:
// GET /api/settings with X-Expose-Secrets: encrypted answers tokens of the secret key; a PATCH and a
// start with secrets_encrypted: true take them back, and the model call and the terminal get the
// values. A token of another key is refused where it stands; without a secret key nothing is
// encrypted or decrypted (503). No value reaches a log line (at trace level) or an answer.
// Interoperability with the real OpenHands 1.58.2: e2e/parity (flow secrets_encrypted).
import { Writable } from 'node:stream';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createAgent } from '../agent/agent.ts';
import { Fernet } from './fernet.ts';
import { NO_CIPHER, NO_CIPHER_TO_DECRYPT } from './secret-tokens.ts';
import { eventually, startTestServer, tempDir, TEST_KEY, useRealAgentServer, userText } from './test-support.ts';

const SECRET_KEY = 'secret-tokens-test-key-0123456789';
let logText = '';
const t = useRealAgentServer({
  createAgent,
  overrides: () => ({ secretKey: SECRET_KEY, log: pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, cb) => ((logText += String(chunk)), cb()) })) }),
});
const fernet = new Fernet(SECRET_KEY);
const stranger = new Fernet('another-servers-key-0123456789');

const API_KEY = 'sk-token-roundtrip-4711';
const HEADER = 'Bearer mcp-token-0815';
const ENV = 'env-token-value-31';
const TERMINAL_SECRET = 'terminal-secret-value-77';

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/settings`, { headers: { 'x-session-api-key': TEST_KEY, ...headers } });
  return { status: res.status, body: await res.json() };
}
const locs = (r: { body: any }) => (r.body.detail as { loc: unknown[] }[]).map((d) => d.loc.join('.'));
const plainValues = [API_KEY, HEADER, ENV, TERMINAL_SECRET];

describe('X-Expose-Secrets: encrypted', () => {
  it('answers each secret field as a token of the secret key, and a PATCH takes tokens back as the values', async () => {
    logText = '';
    const stored = await t.s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: API_KEY }, mcp_config: { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: HEADER } }, tool: { command: 'node', env: { TOKEN: ENV } } } } } });
    expect(stored.status).toBe(200);

    for (const header of ['encrypted', 'true', ' Encrypted ']) {
      const r = await get(t.s.url, { 'X-Expose-Secrets': header });
      expect(r.status).toBe(200);
      const a = r.body.agent_settings;
      for (const token of [a.llm.api_key, a.mcp_config.web.headers.Authorization, a.mcp_config.tool.env.TOKEN]) expect(token).toMatch(/^gAAAAA[A-Za-z0-9_-]+=*$/);
      expect([a.llm.api_key, a.mcp_config.web.headers.Authorization, a.mcp_config.tool.env.TOKEN].map((x: string) => fernet.decrypt(x))).toEqual([API_KEY, HEADER, ENV]);
      expect(r.body.llm_api_key_is_set).toBe(true);
      expect(a.llm.model).toBe('openai/scripted');
      expect(JSON.stringify(r.body)).not.toMatch(/sk-token-roundtrip|mcp-token-0815|env-token-value/);
    }

    // A settings form saves back what it got: the tokens are opened, the values kept.
    const shown = (await get(t.s.url, { 'X-Expose-Secrets': 'encrypted' })).body.agent_settings;
    const back = await t.s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: shown.llm.api_key }, mcp_config: shown.mcp_config } } });
    expect(back.status).toBe(200);
    expect(back.body.agent_settings.llm.api_key).toBe('**********');
    const plain = (await get(t.s.url, { 'X-Expose-Secrets': 'plaintext' })).body.agent_settings;
    expect([plain.llm.api_key, plain.mcp_config.web.headers.Authorization, plain.mcp_config.tool.env.TOKEN]).toEqual([API_KEY, HEADER, ENV]);
    // The one-server route too.
    expect((await t.s.api('/api/settings/mcp/tool', { method: 'PATCH', body: { env: { TOKEN: fernet.encrypt('env-token-value-32') } } })).status).toBe(200);
    expect((await get(t.s.url, { 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.mcp_config.tool.env.TOKEN).toBe('env-token-value-32');

    // Another key's token is refused where it stands (never stored as the key, never echoed); nothing changes.
    const foreign = stranger.encrypt('sk-from-elsewhere-99');
    const refused = await t.s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: foreign }, mcp_config: { web: { headers: { Authorization: foreign } } } } } });
    expect(refused.status).toBe(422);
    expect(locs(refused)).toEqual(['body.agent_settings_diff.llm.api_key', 'body.agent_settings_diff.mcp_config.web.headers.Authorization']);
    expect(JSON.stringify(refused.body)).not.toContain(foreign);
    const mcpRefused = await t.s.api('/api/settings/mcp/other', { method: 'POST', body: { command: 'node', env: { TOKEN: foreign } } });
    expect(mcpRefused.status).toBe(422);
    expect(locs(mcpRefused)).toEqual(['body.env.TOKEN']);
    expect((await get(t.s.url, { 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.llm.api_key).toBe(API_KEY);
    // A value that only looks like plaintext stays one (1.58 too).
    expect((await t.s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: 'gAAAA-not-a-token' } } } })).status).toBe(200);
    expect((await get(t.s.url, { 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.llm.api_key).toBe('gAAAA-not-a-token');

    expect(logText).toContain('settings read');
    for (const v of [...plainValues, 'env-token-value-32', 'sk-from-elsewhere-99']) expect(logText).not.toContain(v);
  });
});

describe('secrets_encrypted: true', () => {
  it('opens the tokens of the agent and the secrets: the model call carries the key, the terminal gets the secret (masked)', async () => {
    logText = '';
    const body = {
      workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'enc') },
      agent: { llm: { model: 'openai/scripted', base_url: t.llm.url, api_key: fernet.encrypt(API_KEY) }, tools: [{ name: 'terminal' }] },
      secrets: { DEPLOY_TOKEN: { kind: 'StaticSecret', value: fernet.encrypt(TERMINAL_SECRET) }, PLAIN_ONE: { kind: 'StaticSecret', value: 'plain-stays-plain' } },
      secrets_encrypted: true,
    };
    const created = await t.s.api('/api/conversations', { method: 'POST', body });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    let auth: unknown;
    t.llm.push(
      (req) => {
        auth = req.headers['authorization'];
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'test "$DEPLOY_TOKEN" = terminal-secret-value-77 && echo same; test "$PLAIN_ONE" = plain-stays-plain && echo plain; echo "$DEPLOY_TOKEN"' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
    );
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('deploy', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect(auth).toBe(`Bearer ${API_KEY}`);
    const obs = (await t.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.find((e: any) => e.observation.kind === 'TerminalObservation');
    expect(obs.observation.content[0].text.trim().split('\n')).toEqual(['same', 'plain', '<secret-hidden>']);
    const info = (await t.s.api(`/api/conversations/${id}`)).body;
    expect(info.agent.llm.api_key).toBe('**********');
    expect(JSON.stringify(info)).not.toMatch(/gAAAAA|terminal-secret-value|sk-token-roundtrip/);

    // Kept sealed over a restart: the next run still has them.
    await t.restart();
    t.llm.push(
      (req) => {
        expect(req.headers['authorization']).toBe(`Bearer ${API_KEY}`);
        return { toolCalls: [{ name: 'terminal', arguments: { command: 'test "$DEPLOY_TOKEN" = terminal-secret-value-77 && echo still' } }] };
      },
      { toolCalls: [{ name: 'finish', arguments: { message: 'again' } }] },
    );
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('again', true) });
    await eventually(async () => (await t.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.filter((e: any) => e.observation.kind === 'TerminalObservation').length === 2, 15_000);
    const second = (await t.s.api(`/api/conversations/${id}/events/search?kind=ObservationEvent&limit=100`)).body.items.filter((e: any) => e.observation.kind === 'TerminalObservation')[1];
    expect(second.observation.content[0].text.trim()).toBe('still');
    for (const v of plainValues) expect(logText).not.toContain(v);
  });

  it('refuses a token another key made (422 where it stands, nothing created), and takes plaintext as 1.58 does', async () => {
    const wd = { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'refused') };
    const foreign = stranger.encrypt('sk-from-elsewhere-99');
    const r = await t.s.api('/api/conversations', {
      method: 'POST',
      body: { workspace: wd, agent: { llm: { model: 'openai/scripted', api_key: foreign }, mcp_config: { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: foreign } } } }, secrets: { A: { kind: 'StaticSecret', value: foreign }, B: { kind: 'LookupSecret', url: 'http://127.0.0.1:9/s', headers: { Authorization: foreign } } }, secrets_encrypted: true },
    });
    expect(r.status).toBe(422);
    expect(locs(r).sort()).toEqual(['body.agent.llm.api_key', 'body.agent.mcp_config.web.headers.Authorization', 'body.secrets.A.value', 'body.secrets.B.headers.Authorization']);
    expect(JSON.stringify(r.body)).not.toContain(foreign);
    expect((await t.s.api('/api/conversations/search')).body.items).toEqual([]);
    // The agent_settings form and the {"mcpServers": ...} form are opened too.
    const settings = await t.s.api('/api/conversations', { method: 'POST', body: { workspace: wd, agent_settings: { agent_kind: 'acp', acp_server: 'opencode', acp_command: ['opencode', 'acp'], mcp_config: { mcpServers: { s: { command: 'x', env: { T: foreign } } } } }, secrets_encrypted: true } });
    expect(locs(settings)).toEqual(['body.agent_settings.mcp_config.mcpServers.s.env.T']);
  });
});

describe('tokens where 1.58 opens an LLM key (profile save and validate, switch_llm)', () => {
  it('opens them, so the model calls carry the value; another key\'s token is a 422', async () => {
    const auths: unknown[] = [];
    const seen = (req: { headers: Record<string, unknown> }) => void auths.push(req.headers['authorization']);
    const llm = (key: string) => ({ model: 'openai/scripted', base_url: t.llm.url, api_key: key });
    // validate: one short model call with the draft.
    t.llm.push((req) => (seen(req), { content: 'ok' }));
    const checked = await t.s.api('/api/profiles/tok/validate', { method: 'POST', body: { llm: llm(fernet.encrypt('sk-validate-31')) } });
    expect(checked.body.valid).toBe(true);
    // save, then a conversation switched to it; and switch_llm with a token.
    expect((await t.s.api('/api/profiles/tok', { method: 'POST', body: { llm: llm(fernet.encrypt('sk-profile-32')) } })).status).toBe(201);
    const id = (await t.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(t.dir.path, 'p') }, agent: { llm: llm('sk-start-30') } } })).body.id;
    expect((await t.s.api(`/api/conversations/${id}/switch_profile`, { method: 'POST', body: { profile_name: 'tok' } })).status).toBe(200);
    t.llm.push((req) => (seen(req), { toolCalls: [{ name: 'finish', arguments: { message: 'one' } }] }));
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('one', true) });
    await eventually(async () => auths.length === 2 && (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect((await t.s.api(`/api/conversations/${id}/switch_llm`, { method: 'POST', body: { llm: llm(fernet.encrypt('sk-switched-33')) } })).status).toBe(200);
    t.llm.push((req) => (seen(req), { toolCalls: [{ name: 'finish', arguments: { message: 'two' } }] }));
    await t.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText('two', true) });
    await eventually(async () => auths.length === 3 && (await t.s.api(`/api/conversations/${id}`)).body.execution_status === 'finished', 15_000);
    expect(auths).toEqual(['Bearer sk-validate-31', 'Bearer sk-profile-32', 'Bearer sk-switched-33']);

    const foreign = llm(stranger.encrypt('sk-elsewhere'));
    for (const [path, body] of [['/api/profiles/tok', { llm: foreign }], ['/api/profiles/tok/validate', { llm: foreign }], [`/api/conversations/${id}/switch_llm`, { llm: foreign }]] as const) {
      const r = await t.s.api(path, { method: 'POST', body });
      expect([r.status, locs(r)]).toEqual([422, ['body.llm.api_key']]);
    }
  });
});

describe('without a secret key', () => {
  it('encrypts nothing and decrypts nothing: 503 with the reason, never a token taken as the value', async () => {
    const dir = tempDir();
    const s = await startTestServer(dir.path, { createAgent });
    try {
      expect(await get(s.url, { 'X-Expose-Secrets': 'encrypted' })).toEqual({ status: 503, body: { detail: NO_CIPHER } });
      expect((await get(s.url, { 'X-Expose-Secrets': 'plaintext' })).status).toBe(200);
      const r = await s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'w') }, agent: { llm: { model: 'openai/x', api_key: fernet.encrypt(API_KEY) } }, secrets_encrypted: true } });
      expect(r).toMatchObject({ status: 503, body: { detail: NO_CIPHER_TO_DECRYPT } });
      expect((await s.api('/api/conversations/search')).body.items).toEqual([]);
    } finally {
      await s.close();
      dir.remove();
    }
  });
});
