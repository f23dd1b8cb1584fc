// ACP agents through the agent server's real HTTP and WebSocket API, with a real ACP server
// (opencode, hack/acp-agent.sh) whose model calls go to scripted model servers over real HTTP:
// a conversation's turn (message -> model -> tool call -> reply) and its events, the sandbox
// environment and secret masking (a LookupSecret as the model key too), switch_acp_model, pause,
// and POST /api/acp/models.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it as base } from 'vitest';
import { createAgent } from '../../agent/agent.ts';
import { opencodeBinary, opencodeConfig, opencodeConfigHome } from '../../testing/acp/opencode.ts';
import { codexAuth, startCredentialSource } from '../../testing/acp/credential-source.ts';
import { STDIO_SERVER } from '../../testing/mcp/server.ts';
import { startScriptedLlm, type RecordedRequest } from '../../testing/scripted-llm/server.ts';
import { eventually, FrameCollector, startTestServer, TEST_KEY, tempDir, userText } from '../test-support.ts';

const bin = opencodeBinary();
const TOKEN = 'tok-acp-secret-4711';
const SERVER_ONLY = 'AGENTYARD_ACP_TEST_SERVER_ONLY';
// opencode starts in seconds (it boots a server of its own per process).
const SLOW = 90_000;

/**
 * One test's world: its scripted models (the agent's and opencode's titles), its directory and its
 * agent server, so that the tests run side by side (each waits mostly on its own opencode).
 */
async function harness() {
  const llm = await startScriptedLlm();
  const titles = await startScriptedLlm();
  const dir = tempDir('acp-');
  const h = {
    llm,
    titles,
    dir,
    s: await startTestServer(dir.path, { createAgent }),
    /** Stops the server (its ACP servers end with it) and starts a new one on the same directory. */
    async restart(opts: Partial<Parameters<typeof startTestServer>[1]> = {}) {
      await h.s.close();
      h.s = await startTestServer(dir.path, { createAgent, ...opts });
    },
    async close() {
      await h.s.close();
      dir.remove();
      await llm.close();
      await titles.close();
    },
    plainSecrets: () => ({ OPENCODE_CONFIG_CONTENT: opencodeConfig(llm.url, titles.url), OPENCODE_DISABLE_MODELS_FETCH: '1', XDG_CONFIG_HOME: opencodeConfigHome(), MY_TOKEN: TOKEN }),
    secrets: (extra: Record<string, string> = {}) => staticSecrets({ ...h.plainSecrets(), ...extra }),
    create: async (extra: Record<string, unknown> = {}) => {
      const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: acpAgent(), secrets: h.secrets(), ...extra } });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    },
    info: async (id: string) => (await h.s.api(`/api/conversations/${id}`)).body,
    events: async (id: string) => (await h.s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[],
    say: (id: string, text: string) => h.s.api(`/api/conversations/${id}/events`, { method: 'POST', body: userText(text, true) }),
    until: (id: string, want: string) => eventually(async () => (await h.info(id)).execution_status === want, SLOW),
  };
  return h;
}
type Harness = Awaited<ReturnType<typeof harness>>;

// Start requests take secrets as SecretSource objects (1.58 refuses plain strings with a 422).
const staticSecrets = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([k, v]) => [k, { kind: 'StaticSecret', value: v }]));
const acpAgent = (extra: Record<string, unknown> = {}) => ({ kind: 'ACPAgent', acp_server: 'opencode', acp_command: [bin, 'acp'], acp_isolate_data_dir: true, ...extra });
/** The agent's model calls have the tools opencode offers; a step answers only those. */
const agentCall = (req: RecordedRequest) => expect(req.tools?.map((t) => t.function.name)).toContain('bash');

/** Each test with a harness of its own, closed after it; every scripted answer used, none failed. */
const it = base.extend<{ h: Harness }>({
  // `{}`: vitest reads which fixtures this one needs from the pattern (none).
  h: async ({}, use) => {
    const h = await harness();
    try {
      await use(h);
    } finally {
      await h.close();
    }
    expect(h.llm.failures).toEqual([]);
    expect(h.llm.remaining()).toBe(0);
  },
});

describe.skipIf(!bin).concurrent('ACP agents (opencode)', () => {
  beforeAll(() => {
    // Something only the agent server has: the ACP server must not see it.
    process.env[SERVER_ONLY] = 'server-only-value';
  });
  afterAll(() => {
    delete process.env[SERVER_ONLY];
  });

  it('runs a turn: the message goes to the ACP server, its tool call and reply come back as 1.58 records them, over the socket too', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, create, info, events, say, until, secrets } = h;
    // agent_context.skills (what an ACP profile launches with) go with the first turn as prompt text.
    const id = await create({ agent: acpAgent({ agent_context: { skills: [{ name: 'acp-style', content: 'ACP-STYLE-CONTENT: indent with tabs.', trigger: null }] } }), secrets: secrets() });
    const ws = new FrameCollector(`${h.s.url.replace('http', 'ws')}/sockets/events/${id}`, { 'x-session-api-key': TEST_KEY });
    await ws.opened;
    llm.push(
      (req) => {
        agentCall(req);
        expect(req.model).toBe('m1');
        expect(JSON.stringify(req.messages)).toContain('write the greeting');
        return { toolCalls: [{ name: 'bash', arguments: { command: `echo hi > out.txt && echo "token=$MY_TOKEN" && echo "server=\${${SERVER_ONLY}:-unset}"`, description: 'greet' } }] };
      },
      (req) => {
        agentCall(req);
        const tool = req.messages.find((m) => m.role === 'tool');
        expect(String(tool?.content)).toContain(`token=${TOKEN}`);
        expect(String(tool?.content)).toContain('server=unset');
        return { content: 'Wrote out.txt.' };
      },
    );
    expect((await say(id, 'write the greeting')).status).toBe(200);
    await until(id, 'finished');

    expect(readFileSync(join(dir.path, 'wd', 'out.txt'), 'utf8')).toBe('hi\n');
    const all = await events(id);
    const kinds = all.filter((e) => e.kind !== 'ConversationStateUpdateEvent').map((e) => e.kind);
    // As 1.58: the placeholder system prompt once the ACP server has started, so after the message.
    expect(kinds).toEqual(['MessageEvent', 'SystemPromptEvent', 'ACPToolCallEvent', 'ACPToolCallEvent', 'ActionEvent', 'ObservationEvent']);
    const [started, ended] = all.filter((e) => e.kind === 'ACPToolCallEvent');
    expect(started).toMatchObject({ source: 'agent', title: 'bash', tool_kind: 'execute', is_error: false });
    expect(['pending', 'in_progress']).toContain(started.status);
    expect(ended).toMatchObject({ tool_call_id: started.tool_call_id, status: 'completed', is_error: false });
    expect(JSON.stringify(ended.raw_output)).toContain('token=**********');
    const finish = all.find((e) => e.kind === 'ActionEvent');
    expect(finish).toMatchObject({ tool_name: 'finish', action: { kind: 'FinishAction', message: 'Wrote out.txt.' } });
    expect(all.find((e) => e.kind === 'ObservationEvent')).toMatchObject({ action_id: finish.id, observation: { kind: 'FinishObservation', content: [{ type: 'text', text: 'Wrote out.txt.' }] } });
    const prompt = all.find((e) => e.kind === 'SystemPromptEvent');
    expect(prompt).toMatchObject({ tools: [], system_prompt: { text: expect.stringContaining('ACP server') } });
    // The secrets' names (never values) go with the first turn, and are shown as the dynamic context.
    expect(prompt.dynamic_context.text).toContain('MY_TOKEN');
    expect(JSON.stringify(llm.requests[0]!.messages)).toContain('MY_TOKEN');
    expect(prompt.dynamic_context.text).toContain('ACP-STYLE-CONTENT');
    expect(JSON.stringify(llm.requests[0]!.messages)).toContain('ACP-STYLE-CONTENT');
    expect(all.filter((e) => e.kind === 'ConversationStateUpdateEvent').map((e) => e.key)).toEqual(expect.arrayContaining(['agent_state', 'stats']));

    const statuses = all.filter((e) => e.kind === 'ConversationStateUpdateEvent' && e.key === 'execution_status').map((e) => e.value);
    expect(statuses).toEqual(['running', 'finished']);
    await ws.until((f) => f.some((e) => e.kind === 'ObservationEvent'), SLOW);
    expect(ws.frames.filter((e) => e.kind === 'ACPToolCallEvent').map((e) => e.id)).toEqual([started.id, ended.id]);

    const i = await info(id);
    expect(i.agent).toMatchObject({ kind: 'ACPAgent', acp_server: 'opencode', llm: { model: 'acp-managed' } });
    expect(i.agent_state).toMatchObject({ acp_agent_name: 'OpenCode', acp_agent_version: '1.18.23', acp_current_model_id: 'scripted/m1', acp_model_via_config_option: true, acp_suffix_installed: true, acp_last_prompt_user_message_id: all.find((e) => e.kind === 'MessageEvent').id });
    expect(i.stats.usage_to_metrics['acp-managed']).toMatchObject({ model_name: 'acp-managed' });
    expect(i).toMatchObject({ current_model_id: 'scripted/m1', supports_runtime_model_switch: true });
    expect(i.available_models).toContainEqual({ model_id: 'scripted/m2', name: expect.any(String), description: null });
    expect(JSON.stringify([i, all, ws.frames])).not.toContain(TOKEN);
    await ws.close();
  });

  it('a LookupSecret of another server as the model key: fetched over HTTP with its headers, it reaches the model request as Authorization', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, titles, dir, info, events, say, until, secrets } = h;
    const key = 'sk-looked-up-acp-9a8b7c';
    const bearer = 'vault-acp-bearer';
    const asked: (string | undefined)[] = [];
    const vault = createServer((req, res) => {
      asked.push(req.headers.authorization);
      if (req.headers.authorization !== `Bearer ${bearer}` || req.url !== '/keys/scripted') return void res.writeHead(403).end();
      res.writeHead(200, { 'content-type': 'text/plain' }).end(key);
    });
    await new Promise<void>((r) => vault.listen(0, '127.0.0.1', r));
    try {
      const vaultUrl = `http://127.0.0.1:${(vault.address() as AddressInfo).port}`;
      // opencode reads the provider key from the environment ({env:...}), where the secret is.
      const r = await h.s.api('/api/conversations', {
        method: 'POST',
        body: {
          workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') },
          agent: acpAgent(),
          secrets: { ...secrets({ OPENCODE_CONFIG_CONTENT: opencodeConfig(llm.url, titles.url, '{env:SCRIPTED_KEY}') }), SCRIPTED_KEY: { kind: 'LookupSecret', url: `${vaultUrl}/keys/scripted`, headers: { Authorization: `Bearer ${bearer}` } } },
        },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      const id = r.body.id as string;
      expect(asked).toEqual([`Bearer ${bearer}`]);
      llm.push((req) => {
        agentCall(req);
        expect(req.headers.authorization).toBe(`Bearer ${key}`);
        return { content: 'Keyed.' };
      });
      await say(id, 'hello');
      await until(id, 'finished');
      expect(JSON.stringify([await info(id), await events(id)])).not.toMatch(new RegExp(`${key}|${bearer}`));
    } finally {
      await new Promise<void>((r) => vault.close(() => r()));
    }
  });

  it('switch_acp_model: before the first run it is kept, live it switches the session; a non-ACP conversation answers 400', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, create, info, events, say, until, secrets } = h;
    const id = await create();
    expect(await h.s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: { model: 'scripted/m2' } })).toEqual({ status: 200, body: { success: true } });
    expect((await info(id)).current_model_id).toBe('scripted/m2');
    llm.push((req) => {
      agentCall(req);
      expect(req.model).toBe('m2');
      return { content: 'on m2' };
    });
    await say(id, 'first');
    await until(id, 'finished');

    expect((await h.s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: { model: 'scripted/m1' } })).status).toBe(200);
    llm.push((req) => {
      agentCall(req);
      expect(req.model).toBe('m1');
      return { content: 'on m1' };
    });
    await say(id, 'second');
    await eventually(async () => (await events(id)).filter((e) => e.kind === 'ObservationEvent').length === 2, SLOW);
    expect((await info(id)).current_model_id).toBe('scripted/m1');

    const rejected = await h.s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: { model: 'nowhere/none' } });
    expect(rejected.status).toBe(400);
    expect(rejected.body.detail).toContain('nowhere/none');
    expect((await h.s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: { model: ' ' } })).status).toBe(400);
    expect((await h.s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: {} })).body.detail[0].loc).toEqual(['body', 'model']);

    // Kept with the conversation: a restarted server starts the next session on it.
    await h.restart();
    expect((await info(id)).current_model_id).toBe('scripted/m1');
    expect((await info(id)).agent.acp_model).toBe('scripted/m1');

    const plain = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd2') }, agent: { llm: { model: 'openai/x' } } } });
    const notAcp = await h.s.api(`/api/conversations/${plain.body.id}/switch_acp_model`, { method: 'POST', body: { model: 'x' } });
    expect(notAcp).toMatchObject({ status: 400, body: { detail: 'switch_acp_model is only supported for ACP conversations.' } });
  });

  // #14: after a real restart a relaunched ACP server had no secrets (opencode's config). The cause was
  // the server having no OH_SECRET_KEY (secrets are then held in memory only, as this test file's
  // servers run); with a key they are sealed with the conversation and the relaunched server gets them.
  it('with OH_SECRET_KEY the secrets survive a restart: the relaunched ACP server gets its config and the token', { timeout: SLOW * 3 }, async ({ h }) => {
    const { llm, dir, create, info, events, say, until } = h;
    const secretKey = 'acp-restart-secret-key-0123456789';
    await h.restart({ secretKey });
    const id = await create();
    llm.push((req) => {
      agentCall(req);
      return { content: 'first turn' };
    });
    await say(id, 'first');
    await until(id, 'finished');

    await h.restart({ secretKey });
    expect(Object.keys((await info(id)).secret_registry.secret_sources).sort()).toEqual(['MY_TOKEN', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_DISABLE_MODELS_FETCH', 'XDG_CONFIG_HOME']);
    llm.push(
      (req) => {
        agentCall(req); // the model is reached at all: opencode got OPENCODE_CONFIG_CONTENT
        return { toolCalls: [{ name: 'bash', arguments: { command: 'echo "token=$MY_TOKEN"', description: 'token' } }] };
      },
      (req) => {
        agentCall(req);
        expect(String(req.messages.find((m) => m.role === 'tool')?.content)).toContain(`token=${TOKEN}`);
        return { content: 'second turn' };
      },
    );
    await say(id, 'second');
    await eventually(async () => (await events(id)).filter((e) => e.kind === 'ObservationEvent').length === 2, SLOW);
    expect((await info(id)).execution_status).toBe('finished');
  });

  it('pause stops the turn at once (the server is told to cancel); the next message runs again', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, create, events, say, until } = h;
    const id = await create();
    let asked!: () => void;
    const held = new Promise<void>((r) => (asked = r));
    llm.push(async (req) => {
      agentCall(req);
      asked();
      await new Promise<void>((resolve) => req.signal.addEventListener('abort', () => resolve(), { once: true }));
      return { content: 'never seen' };
    });
    await say(id, 'take your time');
    await held;
    expect((await h.s.api(`/api/conversations/${id}/pause`, { method: 'POST' })).status).toBe(200);
    await until(id, 'paused');
    expect((await events(id)).some((e) => e.kind === 'ActionEvent')).toBe(false);

    llm.push((req) => {
      agentCall(req);
      return { content: 'back again' };
    });
    await say(id, 'go on');
    await until(id, 'finished');
    expect((await events(id)).find((e) => e.kind === 'ActionEvent')?.action.message).toBe('back again');
  });

  it('agent_settings of kind acp start the same agent; refusals are 422 with locations', async ({ h }) => {
    const { dir } = h;
    const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent_settings: { agent_kind: 'acp', acp_server: 'opencode', acp_command: [bin, 'acp'], acp_model: 'scripted/m2' } } });
    expect(r.status).toBe(201);
    expect(r.body.agent).toMatchObject({ kind: 'ACPAgent', acp_server: 'opencode', acp_model: 'scripted/m2', llm: { model: 'scripted/m2' } });
    expect(r.body.current_model_id).toBe('scripted/m2');

    const custom = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent_settings: { agent_kind: 'acp', acp_server: 'custom' } } });
    expect(custom.status).toBe(422);
    expect(custom.body.detail[0].loc).toEqual(['body', 'agent_settings', 'acp_command']);
    const bad = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent_settings: { agent_kind: 'acp', acp_server: 'nope' } } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'agent_settings', 'acp_server']);
  });

  it('an ACP agent profile launches an ACP conversation: its server, model and command; only the secrets it allows', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, events, say, until, secrets } = h;
    const saved = await h.s.api('/api/agent-profiles/opencode', { method: 'POST', body: { agent_kind: 'acp', acp_server: 'opencode', acp_model: 'scripted/m2', acp_command: `'${bin}' acp`, secret_refs: ['OPENCODE_CONFIG_CONTENT', 'OPENCODE_DISABLE_MODELS_FETCH', 'XDG_CONFIG_HOME', 'HOME'] } });
    expect(saved.status).toBe(201);
    const profile = (await h.s.api('/api/agent-profiles/opencode')).body.profile;
    // No per-conversation data dir in a profile (1.58 has none): HOME comes as a secret, so opencode writes nothing of the machine's.
    const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent_profile_id: profile.id, secrets: secrets({ HOME: join(dir.path, 'home') }) } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.agent).toMatchObject({ kind: 'ACPAgent', acp_server: 'opencode', acp_model: 'scripted/m2', acp_command: [bin, 'acp'] });
    expect(r.body.launched_agent_profile).toMatchObject({ agent_profile_id: profile.id, revision: 0 });
    expect(Object.keys(r.body.secret_registry.secret_sources).sort()).toEqual(['HOME', 'OPENCODE_CONFIG_CONTENT', 'OPENCODE_DISABLE_MODELS_FETCH', 'XDG_CONFIG_HOME']);
    llm.push((req) => {
      agentCall(req);
      expect(req.model).toBe('m2');
      return { toolCalls: [{ name: 'bash', arguments: { command: 'echo "token=${MY_TOKEN:-absent}"', description: 'check' } }] };
    }, (req) => {
      expect(String(req.messages.find((m) => m.role === 'tool')?.content)).toContain('token=absent');
      return { content: 'profile turn' };
    });
    await say(r.body.id, 'from a profile');
    await until(r.body.id, 'finished');
    expect((await events(r.body.id)).find((e) => e.kind === 'ActionEvent')?.action.message).toBe('profile turn');
  });

  it('a server that cannot start ends the run with ConversationErrorEvent ACPSpawnError', { timeout: SLOW }, async ({ h }) => {
    const { dir, create, events, say, until } = h;
    const id = await create({ agent: acpAgent({ acp_command: [join(dir.path, 'no-such-acp')] }) });
    await say(id, 'hello');
    await until(id, 'error');
    const err = (await events(id)).find((e) => e.kind === 'ConversationErrorEvent');
    expect(err).toMatchObject({ code: 'ACPSpawnError', detail: expect.stringContaining('command not found') });
  });

  it('acp_file_secrets: the secret becomes a 0600 file in the conversation\'s acp folder, the env var points at it, and it goes with the conversation', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, info, events, say, until, secrets } = h;
    const CRED = '{"token":"file-cred-20931"}';
    const spec = { secret_name: 'MY_CRED_FILE', filename: 'cred.json', env_var: 'MY_CRED_PATH', subdir: 'my-cli' };
    const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: acpAgent({ acp_file_secrets: [spec] }), secrets: secrets({ MY_CRED_FILE: CRED }) } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.id as string;
    llm.push(
      (req) => {
        agentCall(req);
        return { toolCalls: [{ name: 'bash', arguments: { command: 'echo "path=$MY_CRED_PATH mode=$(stat -c %a "$MY_CRED_PATH") sha=$(sha256sum < "$MY_CRED_PATH" | cut -c1-16) env=${MY_CRED_FILE:-unset}"', description: 'look' } }] };
      },
      (req) => {
        const tool = String(req.messages.find((m) => m.role === 'tool')?.content);
        expect(tool).toContain(`mode=600 sha=${createHash('sha256').update(CRED).digest('hex').slice(0, 16)} env=unset`);
        return { content: 'seen' };
      },
    );
    await say(id, 'look at the credential');
    await until(id, 'finished');
    const conv = join(dir.path, 'data', 'conversations');
    const file = llm.requests.map((q) => String(q.messages.find((m) => m.role === 'tool')?.content)).join('').match(/path=(\S+)/)![1]!;
    expect(file.startsWith(conv)).toBe(true);
    expect(file.endsWith(join('acp', 'my-cli', 'cred.json'))).toBe(true);
    expect(readFileSync(file, 'utf8')).toBe(CRED);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(file, '..')).mode & 0o777).toBe(0o700);
    // Not announced as a variable to use (a file blob), and its value is in no event or response.
    const all = await events(id);
    expect(all.find((e) => e.kind === 'SystemPromptEvent').dynamic_context.text).not.toContain('MY_CRED_FILE');
    expect(JSON.stringify([all, await info(id)])).not.toContain('file-cred-20931');
    expect((await h.s.api(`/api/conversations/${id}`, { method: 'DELETE' })).status).toBe(200);
    expect(existsSync(file)).toBe(false);
  });

  it('prepare-for-sandbox-pause stops the ACP server (204); the next turn starts it again, and a credential file it rewrote (a refreshed token) is kept over the seed', { timeout: SLOW * 3 }, async ({ h }) => {
    const { llm, dir, info, events, say, until, secrets } = h;
    const spec = { secret_name: 'MY_CRED_FILE', filename: 'cred.json', env_var: 'MY_CRED_PATH', subdir: 'my-cli', env_points_to: 'dir' };
    const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: acpAgent({ acp_file_secrets: [spec] }), secrets: secrets({ MY_CRED_FILE: 'seed-1' }) } });
    const id = r.body.id as string;
    llm.push(
      () => ({ toolCalls: [{ name: 'bash', arguments: { command: 'cat "$MY_CRED_PATH/cred.json"; echo; printf refreshed-2 > "$MY_CRED_PATH/cred.json"', description: 'refresh' } }] }),
      (req) => {
        // The ACP server's own model sees the file (it is its credential); our events never do.
        expect(String(req.messages.find((m) => m.role === 'tool')?.content)).toContain('seed-1');
        return { content: 'refreshed' };
      },
    );
    await say(id, 'refresh');
    await until(id, 'finished');
    const session = (await info(id)).agent_state.acp_session_id;
    expect((await h.s.api('/api/conversations/prepare-for-sandbox-pause', { method: 'POST' })).status).toBe(204);
    llm.push(
      () => ({ toolCalls: [{ name: 'bash', arguments: { command: 'cat "$MY_CRED_PATH/cred.json"', description: 'read' } }] }),
      (req) => {
        expect(String(req.messages.filter((m) => m.role === 'tool').at(-1)?.content)).toContain('refreshed-2');
        return { content: 'kept' };
      },
    );
    await say(id, 'read again');
    await eventually(async () => (await events(id)).filter((e) => e.kind === 'ObservationEvent').length === 2, SLOW);
    // A new ACP server process that loaded the session the stopped one had (1.58 resumes it too).
    expect((await info(id)).agent_state.acp_session_id).toBe(session);
  });

  describe('after an agent-server restart', () => {
    /** A first turn whose model call answers `reply`; the ACP session it ran in. */
    const firstTurn = async (h: Harness, id: string, reply: string) => {
      h.llm.push((req) => {
        agentCall(req);
        return { content: reply };
      });
      await h.say(id, 'the word is PAPAYA');
      await h.until(id, 'finished');
      return (await h.info(id)).agent_state.acp_session_id as string;
    };
    const secondTurn = async (h: Harness, id: string, check: (req: RecordedRequest) => void) => {
      h.llm.push((req) => {
        agentCall(req);
        check(req);
        return { content: 'answered' };
      });
      await h.say(id, 'what is the word?');
      await eventually(async () => (await h.events(id)).filter((e) => e.kind === 'ObservationEvent').length === 2, SLOW);
    };
    // The conversation's secrets (here opencode's configuration) outlive a restart only sealed with
    // the server's secret key (OH_SECRET_KEY, which the runtimes always set); without one they are
    // forgotten, and the restarted opencode would not know the scripted provider.
    const SECRET_KEY = 'acp-resume-secret-key';
    /**
     * The test's server started again with the secret key; its `restart` stops it (its ACP servers end
     * with it), runs `between`, and starts a new one on the same data dir, whose warnings go to `logged`.
     */
    const restartable = async (h: Harness) => {
      const logged: string[] = [];
      await h.restart({ secretKey: SECRET_KEY });
      const restart = async (between = () => {}) => {
        await h.s.close();
        between();
        const sink = new Writable({ write: (chunk, _enc, cb) => (logged.push(String(chunk)), cb()) });
        h.s = await startTestServer(h.dir.path, { createAgent, secretKey: SECRET_KEY, log: pino({ level: 'warn' }, sink) });
      };
      return { logged, restart };
    };
    const texts = (req: RecordedRequest) => JSON.stringify(req.messages);

    it('the next turn continues the ACP session (session/load): the model call carries the first turn, the suffix is not sent again', { timeout: SLOW * 3 }, async ({ h }) => {
      const { dir, create, info, events } = h;
      const { logged, restart } = await restartable(h);
      const id = await create();
      const session = await firstTurn(h, id, 'Noted: PAPAYA.');
      await restart();
      // Read back before any server runs, as 1.58 shows it from its stored state.
      expect((await info(id)).agent_state).toMatchObject({ acp_session_id: session, acp_session_cwd: join(dir.path, 'wd'), acp_suffix_installed: true });
      await secondTurn(h, id, (req) => {
        expect(texts(req)).toContain('the word is PAPAYA');
        expect(texts(req)).toContain('Noted: PAPAYA.');
        // The secrets' names went with the first turn only: the resumed history has them once.
        expect(texts(req).split('<CUSTOM_SECRETS>').length - 1).toBe(1);
      });
      expect((await info(id)).agent_state).toMatchObject({ acp_session_id: session, acp_suffix_installed: true });
      expect(logged.join('')).not.toContain('not resumed');
      // As 1.58: the placeholder system prompt is recorded again when an ACP server starts for the conversation.
      const kinds = (await events(id)).filter((e) => e.kind !== 'ConversationStateUpdateEvent').map((e) => e.kind);
      expect(kinds).toEqual(['MessageEvent', 'SystemPromptEvent', 'ActionEvent', 'ObservationEvent', 'MessageEvent', 'SystemPromptEvent', 'ActionEvent', 'ObservationEvent']);
    });

    it('a turn the restart cut off is prompted again on its own, then the new message in a turn of its own (1.58: one prompt per message)', { timeout: SLOW * 3 }, async ({ h }) => {
      const { llm, create, events, say, until } = h;
      const { restart } = await restartable(h);
      const id = await create();
      let asked!: () => void;
      const held = new Promise<void>((r) => (asked = r));
      // The first model call is held until the stopping ACP server hangs up.
      llm.push(async (req) => {
        asked();
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 8000);
          req.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
        });
        return { content: 'late answer' };
      });
      await say(id, 'first word APPLE');
      await held;
      await restart();
      llm.push({ content: 'answer one' }, { content: 'answer two' });
      await say(id, 'second word BANANA');
      await eventually(async () => (await events(id)).filter((e) => e.kind === 'ObservationEvent').length === 2, SLOW);
      // What each call after the cut-off one was given as its newest user turn.
      const newest = (req: RecordedRequest) => {
        const turn = JSON.stringify(req.messages.slice(req.messages.map((m) => m.role).lastIndexOf('assistant') + 1).filter((m) => m.role === 'user'));
        return ['APPLE', 'BANANA'].filter((w) => turn.includes(w));
      };
      expect(llm.requests.slice(1).map(newest)).toEqual([['APPLE'], ['BANANA']]);
      expect((await events(id)).filter((e) => e.kind === 'ActionEvent').map((e) => e.action.message)).toEqual(['answer one', 'answer two']);
      await until(id, 'finished');
    });

    it('when the ACP server has forgotten the session (its storage gone), a new session starts without the context, with the suffix again, and the log says so', { timeout: SLOW * 3 }, async ({ h }) => {
      const { dir, create, info } = h;
      const { logged, restart } = await restartable(h);
      const id = await create();
      const session = await firstTurn(h, id, 'Noted: PAPAYA.');
      // opencode keeps its sessions under the isolated HOME (acp_isolate_data_dir) of the conversation.
      const store = join(dir.path, 'data', 'conversations', id, 'acp', 'opencode', '.local', 'share', 'opencode');
      expect(existsSync(store)).toBe(true);
      await restart(() => rmSync(store, { recursive: true }));
      await secondTurn(h, id, (req) => {
        expect(texts(req)).not.toContain('PAPAYA');
        expect(texts(req)).toContain('<CUSTOM_SECRETS>');
      });
      const now = (await info(id)).agent_state;
      expect(now.acp_session_id).toEqual(expect.any(String));
      expect(now.acp_session_id).not.toBe(session);
      const warning = logged.map((l) => JSON.parse(l)).find((l) => l.msg.includes('not resumed'));
      expect(warning).toMatchObject({ conversationId: id, previousSession: `...${session.slice(-8)}`, reason: expect.stringContaining('session/load failed') });
      expect(logged.join('')).not.toContain(session);
    });
  });

  it('forwards the conversation\'s MCP servers to the ACP session: opencode calls a tool of one', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, events, say, until, secrets } = h;
    // 1.58's form (the server map itself); `{"mcpServers": ...}` is taken too.
    const mcp_config = { testmcp: { command: process.execPath, args: [STDIO_SERVER] }, off: { command: process.execPath, args: [STDIO_SERVER], enabled: false } };
    const r = await h.s.api('/api/conversations', { method: 'POST', body: { workspace: { kind: 'LocalWorkspace', working_dir: join(dir.path, 'wd') }, agent: acpAgent({ mcp_config }), secrets: secrets() } });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const id = r.body.id as string;
    let echo = '';
    llm.push(
      (req) => {
        agentCall(req);
        const names = req.tools?.map((t) => t.function.name) ?? [];
        echo = names.find((n) => n.startsWith('testmcp') && n.endsWith('echo')) ?? '';
        expect(echo, names.join(',')).not.toBe('');
        expect(names.some((n) => n.startsWith('off'))).toBe(false);
        return { toolCalls: [{ name: echo, arguments: { text: 'through-acp' } }] };
      },
      (req) => {
        expect(String(req.messages.find((m) => m.role === 'tool')?.content)).toContain('echo: through-acp');
        return { content: 'echoed' };
      },
    );
    await say(id, 'echo something');
    await until(id, 'finished');
    const calls = (await events(id)).filter((e) => e.kind === 'ACPToolCallEvent');
    expect(calls.at(-1)).toMatchObject({ status: 'completed', is_error: false });
  });

  it('credential bindings: the Codex auth.json comes from its HTTP source into a private CODEX_HOME; a refresh the server writes goes back; rotated headers are taken live; prepare-for-sandbox-pause flushes and removes it', { timeout: SLOW * 2 }, async ({ h }) => {
    const { llm, dir, create, info, events, say, until, secrets } = h;
    const auth = codexAuth;
    const source = await startCredentialSource(auth('refresh-rt-one'), 'Bearer k1');
    const url = source.url;
    try {
      // An ACP server nobody recognises by name: every built-in credential file applies to it (1.58).
      const link = join(dir.path, 'some-acp-cli');
      symlinkSync(bin!, link);
      const id = await create({ agent: { kind: 'ACPAgent', acp_server: 'custom', acp_command: [link, 'acp'], acp_isolate_data_dir: true } });
      const bind = (name: string, body: unknown) => h.s.api(`/api/conversations/${id}/credential-bindings/${name}`, { method: 'PUT', body });
      expect((await bind('OTHER_SECRET', { url })).status).toBe(404);
      expect((await bind('CODEX_AUTH_JSON', {})).body.detail[0].loc).toEqual(['body', 'url']);
      expect(await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer wrong' } })).toMatchObject({ status: 403 });
      expect((await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer k1' } })).status).toBe(204);

      llm.push(
        () => ({ toolCalls: [{ name: 'bash', arguments: { command: 'echo "home=$CODEX_HOME mode=$(stat -c %a "$CODEX_HOME/auth.json") sha=$(sha256sum < "$CODEX_HOME/auth.json" | cut -c1-16)"; sed -i s/rt-one/rt-two/g "$CODEX_HOME/auth.json"', description: 'refresh' } }] }),
        (req) => {
          const tool = String(req.messages.find((m) => m.role === 'tool')?.content);
          expect(tool).toContain(`mode=600 sha=${createHash('sha256').update(auth('refresh-rt-one')).digest('hex').slice(0, 16)}`);
          return { content: 'refreshed' };
        },
      );
      await say(id, 'refresh the token');
      await until(id, 'finished');
      const home = String(llm.requests[1]!.messages.find((m) => m.role === 'tool')?.content).match(/home=(\S+)/)![1]!;
      expect(home.startsWith(join(dir.path, 'data'))).toBe(false);
      // The refresh went back to the source, against the version it was loaded at.
      await eventually(async () => source.value === auth('refresh-rt-two'), 10_000);
      expect(source.seen.filter((r) => r.method === 'PUT')).toEqual([{ method: 'PUT', auth: 'Bearer k1', body: { expected_version: 'v1', value: auth('refresh-rt-two') } }]);

      // Live: the same source with new headers is taken (a rotated authorization); another source is too late.
      source.key = 'Bearer k2';
      expect((await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer k2' } })).status).toBe(204);
      expect((await bind('CODEX_AUTH_JSON', { url: `${url}-other`, headers: { Authorization: 'Bearer k2' } })).status).toBe(409);
      writeFileSync(join(home, 'auth.json'), auth('refresh-rt-three'));
      expect((await h.s.api('/api/conversations/prepare-for-sandbox-pause', { method: 'POST' })).status).toBe(204);
      // Flushed with the rotated headers before the server stopped, and the private copy is gone.
      expect(source).toMatchObject({ value: auth('refresh-rt-three'), version: 'v3' });
      expect(source.seen.at(-1)).toMatchObject({ method: 'PUT', auth: 'Bearer k2' });
      expect(existsSync(home)).toBe(false);
      const all = JSON.stringify([await events(id), await info(id)]);
      for (const secret of ['refresh-rt-one', 'refresh-rt-two', 'Bearer k1', 'Bearer k2']) expect(all).not.toContain(secret);
    } finally {
      source.close();
    }
  });

  describe('POST /api/acp/models', () => {
    const discover = (h: Harness, agent_settings: Record<string, unknown>, extra: Record<string, unknown> = {}) => h.s.api('/api/acp/models', { method: 'POST', body: { agent_settings, secrets: h.secrets(), ...extra } });

    it('starts the server in a throwaway session and reports its models; a second ask is answered from the cache', { timeout: SLOW }, async ({ h }) => {
      const { dir } = h;
      const settings = { acp_server: 'opencode', acp_command: [bin, 'acp'], acp_isolate_data_dir: true };
      const r = await discover(h, settings);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ agent_name: 'OpenCode', agent_version: '1.18.23', current_model_id: 'scripted/m1', supports_runtime_model_switch: true, error: null });
      expect(r.body.available_models).toContainEqual({ model_id: 'scripted/m2', name: expect.any(String), description: null });
      const started = Date.now();
      expect((await discover(h, settings)).body).toEqual(r.body);
      // From the cache: opencode alone takes seconds to start.
      expect(Date.now() - started).toBeLessThan(1000);
      expect(existsSync(join(dir.path, 'data', 'conversations'))).toBe(true);
      expect(JSON.stringify(r.body)).not.toContain(TOKEN);
    });

    it('a launch failure is an answer (error.code), not an HTTP error; custom without a command is 422', async ({ h }) => {
      const { dir } = h;
      const r = await discover(h, { acp_server: 'custom', acp_command: [join(dir.path, 'missing-acp')] });
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ available_models: [], error: { code: 'ACPSpawnError' } });
      const custom = await discover(h, { acp_server: 'custom' });
      expect(custom.status).toBe(422);
      expect(custom.body.detail[0].loc).toEqual(['body', 'agent_settings', 'acp_command']);
    });
  });
});
