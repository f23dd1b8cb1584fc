// Differential flow for OpenHands' encrypted wire form of secrets (X-Expose-Secrets: encrypted,
// secrets_encrypted: true), with interoperability checked both ways on each side: the tokens a
// server answers are opened by OpenHands 1.58.2's own Cipher (its venv's Python) and by ours
// (src/agent-server/fernet.ts) with the shared OH_SECRET_KEY, and each server takes back a token
// made by 1.58.2's Cipher and one made by ours. Since both sides run the same flow, the real 1.58.2
// opens our tokens and ours opens its tokens; the views agree only if all four ways work.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { until } from '../../src/testing/until.ts';
import { Fernet } from '../../src/agent-server/fernet.ts';
import { agent, startBody, type Flow } from './flows.ts';
import { KEY, openhandsBinary, restartable, SECRET_KEY, type Side } from './servers.ts';

const execFileAsync = promisify(execFile);

/** 1.58.2's Cipher(SECRET_KEY): each of `tokens` decrypted (null when it cannot), and a new token of `plain`. */
async function pythonCipher(tokens: string[], plain: string): Promise<{ opened: (string | null)[]; token: string }> {
  const python = join(dirname(openhandsBinary()!), 'python');
  // 1.58.2's own cipher module, loaded by path: the openhands.sdk package would import LiteLLM and more (seconds, with retries).
  const script = [
    'import json, sys, importlib.util, openhands',
    'from pydantic import SecretStr',
    'spec = importlib.util.spec_from_file_location("oh_cipher", openhands.__path__[0] + "/sdk/utils/cipher.py")',
    'mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); Cipher = mod.Cipher',
    'c = Cipher(sys.argv[1])',
    'print(json.dumps({"opened": [c.try_decrypt_str(t) for t in json.loads(sys.argv[2])], "token": c.encrypt(SecretStr(sys.argv[3]))}))',
  ].join('\n');
  const { stdout } = await execFileAsync(python, ['-c', script, SECRET_KEY, JSON.stringify(tokens), plain], { env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', OPENHANDS_SUPPRESS_BANNER: '1', HOME: dirname(openhandsBinary()!) }, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

async function settings(s: Side, expose?: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`${s.url}/api/settings`, { headers: { 'x-session-api-key': KEY, ...(expose ? { 'x-expose-secrets': expose } : {}) } });
  return { status: r.status, body: await r.json() };
}

const tokenShape = (v: unknown) => typeof v === 'string' && /^gAAAAA[A-Za-z0-9_-]+=*$/.test(v);
const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }], run: true });

/** A secret store of someone else's over real HTTP: /vault/{name} answered with the value for the right bearer token. */
async function startVault(values: Record<string, string>, token: string) {
  const hits: { path: string; auth: string | undefined }[] = [];
  const server = createServer((req, res) => {
    hits.push({ path: req.url ?? '', auth: req.headers.authorization });
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(403).end('forbidden');
    const value = values[(req.url ?? '').replace(/^\/vault\//, '')];
    if (value === undefined) return void res.writeHead(404).end('no such secret');
    res.writeHead(200, { 'content-type': 'text/plain' }).end(value);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits, close: () => new Promise<void>((r) => server.close(() => r())) };
}

export const SECRETS_FLOWS: Record<string, Flow> = {
  /**
   * A LookupSecret of another server's URL (not the agent server's own store): GET with the
   * lookup's headers, the answer the value the terminal sees (masked in the output); and one whose
   * URL answers 403.
   */
  async secret_lookup_remote(s) {
    const value = 'dk_remote_parity_0123456789';
    const token = 'vault-parity-bearer';
    const vault = await startVault({ DEPLOY_KEY: value }, token);
    const view: Record<string, unknown> = {};
    try {
      const lookup = (name: string, auth: string) => ({ kind: 'LookupSecret', url: `${vault.url}/vault/${name}`, headers: { Authorization: `Bearer ${auth}` } });
      s.llm.push(
        { toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$DEPLOY_KEY" | sha256sum | cut -c1-16; echo "key=$DEPLOY_KEY"' } }] },
        { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
      );
      const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: agent(s, ['terminal']), secrets: { DEPLOY_KEY: lookup('DEPLOY_KEY', token) } }) });
      view['start'] = r.status;
      view['fetched_before_use'] = vault.hits.length > 0;
      const id = r.body.id;
      await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('Deploy.') });
      view['end'] = await until('the run to end', async () => {
        const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
        return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
      });
      const evs = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
      view['terminal'] = evs.find((e) => e.kind === 'ObservationEvent')?.observation?.content?.[0]?.text?.trim().split('\n');
      view['value_sha'] = createHash('sha256').update(value).digest('hex').slice(0, 16);
      view['headers_sent'] = [...new Set(vault.hits.map((h) => h.auth === `Bearer ${token}`))];
      const info = JSON.stringify((await s.api(`/api/conversations/${id}`)).body);
      view['value_or_header_in_events_or_info'] = [JSON.stringify(evs), info].some((t) => t.includes(value) || t.includes(token));
      await s.api(`/api/conversations/${id}`, { method: 'DELETE' });

      // A lookup its URL refuses (403).
      const refused = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: agent(s, ['terminal']), secrets: { DEPLOY_KEY: lookup('DEPLOY_KEY', 'wrong-parity-token') } }) });
      view['refused_lookup_start'] = refused.status;
      view['refused_lookup_detail_leaks'] = JSON.stringify(refused.body).includes('wrong-parity-token');
      if (refused.status === 201) await s.api(`/api/conversations/${refused.body.id}`, { method: 'DELETE' });
    } finally {
      await vault.close();
    }
    return view;
  },

  async secrets_encrypted(s) {
    const view: Record<string, unknown> = {};
    const patch = (diff: unknown) => s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: diff } });
    await patch({ llm: { api_key: 'sk-parity-enc-stored' }, mcp_config: { 'parity-enc': { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer parity-enc-header' } } } });

    const enc = await settings(s, 'encrypted');
    const exposed = [enc.body.agent_settings?.llm?.api_key, enc.body.agent_settings?.mcp_config?.['parity-enc']?.headers?.Authorization];
    const mine = new Fernet(SECRET_KEY);
    const python = await pythonCipher(exposed, 'sk-parity-from-python');
    view['get_encrypted'] = { status: enc.status, token_shaped: exposed.map(tokenShape), python_opens: python.opened, agentyard_opens: exposed.map((t) => (typeof t === 'string' ? (mine.decrypt(t) ?? null) : null)) };
    view['legacy_true_header'] = (await settings(s, 'true')).body.agent_settings?.llm?.api_key?.startsWith('gAAAAA') ?? false;

    // Sent back (the settings form's round trip): a 1.58.2-made and an agentyard-made token.
    const back = await patch({ llm: { api_key: python.token }, mcp_config: { 'parity-enc': { headers: { Authorization: mine.encrypt('Bearer from-agentyard') } } } });
    const plain = (await settings(s, 'plaintext')).body.agent_settings;
    view['patch_tokens_back'] = { status: back.status, llm_key: plain.llm.api_key, header: plain.mcp_config['parity-enc']?.headers?.Authorization };

    // A start with secrets_encrypted: the model call carries the opened key, the terminal gets the opened secret.
    const start = async (apiKey: string, secret: string) => {
      let auth: unknown;
      s.llm.push(
        (req) => {
          auth = req.headers['authorization'];
          return { toolCalls: [{ name: 'terminal', arguments: { command: 'test "$PARITY_TOKEN" = parity-terminal-secret && echo same || echo different' } }] };
        },
        { toolCalls: [{ name: 'finish', arguments: { message: 'done' } }] },
      );
      const body = startBody(s, { agent: { ...agent(s, ['terminal']), llm: { ...(agent(s).llm as object), api_key: apiKey } }, secrets: { PARITY_TOKEN: { kind: 'StaticSecret', value: secret } }, secrets_encrypted: true });
      const r = await s.api('/api/conversations', { method: 'POST', body });
      if (r.status !== 201) return { status: r.status };
      const id = r.body.id;
      await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('Check the token.') });
      const end = await until('the run to end', async () => {
        const st = (await s.api(`/api/conversations/${id}`)).body.execution_status;
        return ['finished', 'error', 'stuck'].includes(st) ? st : undefined;
      });
      const evs = (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
      const out = evs.find((e) => e.kind === 'ObservationEvent')?.observation?.content?.[0]?.text?.trim().split('\n')[0];
      const shownKey = (await s.api(`/api/conversations/${id}`)).body.agent?.llm?.api_key;
      await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
      shown.add(shownKey ?? null);
      return { status: r.status, end, model_auth: auth, terminal: out };
    };
    const shown = new Set<unknown>();
    const fromPython = await pythonCipher([], 'parity-terminal-secret');
    view['start_python_tokens'] = await start(python.token, fromPython.token);
    view['start_agentyard_tokens'] = await start(mine.encrypt('sk-parity-from-agentyard'), mine.encrypt('parity-terminal-secret'));
    view['start_plain_values'] = await start('sk-parity-plain', 'parity-terminal-secret');
    view['info_api_key'] = [...shown];

    // A token another key made: 1.58.2 drops it (the key becomes null), ours refuses (deliberate).
    const foreign = new Fernet('another-servers-key').encrypt('sk-parity-foreign');
    const refused = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: { ...agent(s), llm: { ...(agent(s).llm as object), api_key: foreign } }, secrets_encrypted: true }) });
    view['foreign_token_start'] = refused.status;
    if (refused.status === 201) await s.api(`/api/conversations/${refused.body.id}`, { method: 'DELETE' });

    await patch({ llm: { api_key: null }, mcp_config: { 'parity-enc': null } });
    return view;
  },

  /** The forms a start request's `secrets` entry may take (a /secrets update takes more: it coerces a plain string). */
  async secrets_start_forms(s) {
    const view: Record<string, unknown> = {};
    const forms: Record<string, unknown> = {
      plain_string: 'parity-plain',
      value_only: { value: 'parity-value-only' },
      static: { kind: 'StaticSecret', value: 'parity-static' },
    };
    for (const [form, secret] of Object.entries(forms)) {
      const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { secrets: { PARITY_FORM: secret } }) });
      // Where the 422 points (the issue types are each validator's own words).
      view[form] = [r.status, Array.isArray(r.body?.detail) ? r.body.detail.map((d: any) => d.loc) : undefined];
      if (r.status === 201) {
        // The update route's plain string, on the conversation just made.
        if (form === 'static') view['update_plain_string'] = (await s.api(`/api/conversations/${r.body.id}/secrets`, { method: 'POST', body: { secrets: { PARITY_LATER: 'parity-later' } } })).status;
        await s.api(`/api/conversations/${r.body.id}`, { method: 'DELETE' });
      }
    }
    return view;
  },

  /**
   * OH_SECRET_KEY rotated over restarts of a server of the side's kind (its own data, kept between
   * starts): A, then B with A in OH_PREVIOUS_SECRET_KEYS, then B alone (what A sealed was sealed
   * again with B at the previous start), then C alone (no key opens it), then C with B given back.
   */
  async secret_key_rotation(s) {
    const server = restartable(s.name);
    const view: Record<string, unknown> = {};
    const values = async (api: Awaited<ReturnType<typeof server.start>>['api']) => {
      const plain = await settingsOf(api);
      const secret = await api('/api/settings/secrets/PARITY_ROTATED');
      return { llm_key: plain?.llm?.api_key ?? null, header: plain?.mcp_config?.['parity-rot']?.headers?.Authorization ?? null, secret: [secret.status, secret.status === 200 ? secret.body : null] };
    };
    try {
      let on = await server.start({ secret: 'rotation-key-a' });
      await on.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: 'sk-rotated' }, mcp_config: { 'parity-rot': { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer rotated' } } } } } });
      await on.api('/api/settings/secrets', { method: 'PUT', body: { name: 'PARITY_ROTATED', value: 'rotated-secret' } });
      view['key_a'] = await values(on.api);
      const tokenA = (await settingsOf(on.api, 'encrypted'))?.llm?.api_key;
      await on.close();

      on = await server.start({ secret: 'rotation-key-b', previous: ['rotation-key-a'] });
      view['key_b_previous_a'] = await values(on.api);
      // A token of key A (as a browser holds it) sent back: opened with the previous key.
      const back = await on.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { llm: { api_key: tokenA } } } });
      view['token_a_back'] = [back.status, (await settingsOf(on.api))?.llm?.api_key ?? null];
      await on.close();

      on = await server.start({ secret: 'rotation-key-b' });
      view['key_b_alone'] = await values(on.api);
      await on.close();

      on = await server.start({ secret: 'rotation-key-c' });
      view['key_c_alone'] = await values(on.api);
      view['key_c_patch'] = (await on.api('/api/settings', { method: 'PATCH', body: { conversation_settings_diff: { max_iterations: 7 } } })).status;
      await on.close();

      on = await server.start({ secret: 'rotation-key-c', previous: ['rotation-key-b'] });
      view['key_c_previous_b'] = await values(on.api);
      await on.close();
    } finally {
      server.remove();
    }
    return view;
  },

  /** The stored settings' routing, condenser and critic fields (PATCH /api/settings), the critic's key a secret like the LLM's. */
  async settings_stored_agent_fields(s) {
    const view: Record<string, unknown> = {};
    const pick = (a: any) => ({ condenser: a?.condenser, verification: a?.verification, routing: a?.enable_classify_and_switch_llm_tool, meta_profile: a?.meta_profile });
    view['before'] = pick(await settingsOf(s.api, ''));
    const diff = {
      condenser: { max_size: 120, keep_first: 4 },
      verification: { critic_enabled: true, critic_threshold: 0.7, critic_server_url: 'http://127.0.0.1:9/critic', critic_api_key: 'sk-critic-stored' },
      enable_classify_and_switch_llm_tool: true,
    };
    const r = await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: diff } });
    view['patch'] = r.status;
    view['masked'] = pick(await settingsOf(s.api, ''));
    view['plaintext_critic_key'] = (await settingsOf(s.api))?.verification?.critic_api_key ?? null;
    const enc = (await settingsOf(s.api, 'encrypted'))?.verification?.critic_api_key;
    view['encrypted_critic_key'] = typeof enc === 'string' && enc.startsWith('gAAAAA');
    const bad = await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { condenser: { max_size: 'many' }, verification: { critic_threshold: 2 } } } });
    // Both refuse; ours locates the fields (OpenHands answers "Settings validation failed"), as for every other 422.
    view['bad'] = bad.status;
    // Back to the defaults, for the flows after this one.
    const reset = await s.api('/api/settings', { method: 'PATCH', body: { agent_settings_diff: { condenser: { max_size: 240, keep_first: 2 }, verification: { critic_enabled: false, critic_threshold: 0.6, critic_server_url: null, critic_api_key: null }, enable_classify_and_switch_llm_tool: false } } });
    view['reset'] = [reset.status, pick(reset.body?.agent_settings)];
    return view;
  },
};

/** GET /api/settings' agent settings as `X-Expose-Secrets` shows them. */
async function settingsOf(api: Side['api'], expose = 'plaintext'): Promise<any> {
  return (await api('/api/settings', { headers: expose ? { 'x-expose-secrets': expose } : {} })).body?.agent_settings;
}
