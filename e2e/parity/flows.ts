// The flows of the differential suite. Each drives one server (a Side) and returns what a client saw,
// reduced to what must agree: status codes, field names, event kinds in order, execution status,
// WebSocket frames and close codes, 422 locations, the tools offered to the model. Values that differ
// by nature (ids, timestamps, texts of the system prompt) are left out on purpose.
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { until } from '../../src/testing/until.ts';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import OpenAI from 'openai';
import WebSocket from 'ws';
import type { ScriptStep } from '../../src/testing/scripted-llm/server.ts';
import { STDIO_SERVER } from '../../src/testing/mcp/server.ts';
import { startOAuthMcpServer } from '../../src/testing/mcp/oauth-server.ts';
import { KEY, openhandsBinary, SECRET_KEY, type Side } from './servers.ts';
import { PROFILE_FLOWS } from './flows-profiles.ts';
import { ACP_FLOWS } from './flows-acp.ts';
import { SECURITY_FLOWS } from './flows-security.ts';
import { SECRETS_FLOWS } from './flows-secrets.ts';
import { AGENT_SETTINGS_FLOWS, MCP_FORM_FLOWS } from './flows-mcp-forms.ts';

const execFileAsync = promisify(execFile);

export type View = Record<string, unknown>;
export type Flow = (s: Side) => Promise<View>;

const MODEL = 'openai/scripted';

/** A plugin in a local git repository (beside the side's working directory) with one agent definition. */
function pluginRepo(workDir: string): string {
  const repo = mkdtempSync(join(dirname(workDir), 'plugin-'));
  mkdirSync(join(repo, '.plugin'));
  mkdirSync(join(repo, 'agents'));
  writeFileSync(join(repo, '.plugin', 'plugin.json'), JSON.stringify({ name: 'parity-tools', version: '1.0.0', description: 'Parity plugin' }));
  writeFileSync(join(repo, 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews things\ntools:\n  - terminal\n---\nYou review things. Start every answer with VERDICT.\n');
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Parity', '-c', 'user.email=parity@example.com', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'plugin');
  return repo;
}

export function agent(s: Side, tools: string[] = ['terminal', 'file_editor']): Record<string, unknown> {
  return { kind: 'Agent', llm: { model: MODEL, base_url: s.llm.url, api_key: 'sk-parity', usage_id: 'agent' }, tools: tools.map((name) => ({ name, params: {} })) };
}

export function startBody(s: Side, extra: Record<string, unknown> = {}): Record<string, unknown> {
  // autotitle off: OpenHands asks the agent's model for a title at the first message (ours does not
  // title conversations: a gap, listed), which would take a step of the script.
  return { agent: agent(s), workspace: { kind: 'LocalWorkspace', working_dir: s.workDir }, autotitle: false, ...extra };
}

const text = (t: string, run?: boolean) => ({ role: 'user', content: [{ type: 'text', text: t }], ...(run === undefined ? {} : { run }) });
const finish = (message: string): ScriptStep => ({ toolCalls: [{ name: 'finish', arguments: { message } }] });


async function events(s: Side, id: string): Promise<any[]> {
  const r = await s.api(`/api/conversations/${id}/events/search?limit=100`);
  if (r.status !== 200) throw new Error(`events/search: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.items;
}

async function status(s: Side, id: string): Promise<string> {
  return (await s.api(`/api/conversations/${id}`)).body.execution_status;
}

/** Waits for one of the end states; returns it. */
const settled = (s: Side, id: string) => until('the run to end', async () => {
  const st = await status(s, id);
  return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
});

const isUpdate = (e: any) => e.kind === 'ConversationStateUpdateEvent';
/**
 * The conversation's own events in order. State updates are left out here: where they fall between
 * them depends on timing (when usage is counted, for one), so they are compared by `updates`.
 */
const kinds = (evs: any[]) => evs.filter((e) => !isUpdate(e)).map((e) => (e.kind === 'MessageEvent' ? `MessageEvent:${e.source}` : e.kind));
/** The state updates a client is told about: the keys updated, and the execution statuses in order. */
const updates = (evs: any[]) => ({
  keys: [...new Set(evs.filter(isUpdate).map((e) => e.key))].sort(),
  statuses: evs.filter((e) => isUpdate(e) && e.key === 'execution_status').map((e) => e.value),
});
const sortedKeys = (o: unknown) => Object.keys((o ?? {}) as object).sort();
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : body);
/** What the model was offered: tool names, sorted (the order is the provider's concern). */
const offered = (s: Side, i: number) => (s.llm.requests[i]?.tools ?? []).map((t) => t.function.name).sort();

/** What the OpenHands Python SDK (from the OpenHands venv) makes of a server's stored settings: the LLM and MCP servers a client would build its agent from. */
async function pythonSdkSettings(url: string): Promise<unknown> {
  const python = join(dirname(openhandsBinary()!), 'python');
  const script = [
    'import json, sys',
    'from openhands.sdk.workspace.remote.base import RemoteWorkspace',
    'w = RemoteWorkspace(host=sys.argv[1], api_key=sys.argv[2], working_dir="/tmp")',
    'llm = w.get_llm()',
    'mcp = w.get_mcp_config()',
    'print(json.dumps({"model": llm.model, "api_key": llm.api_key.get_secret_value() if llm.api_key else None, "mcp": {k: {"url": v.url, "headers": sorted(v.headers or {}), "enabled": v.enabled} for k, v in mcp.items()}}))',
  ].join('\n');
  // LiteLLM's bundled cost map, as the server runs with (openhandsEnv): without it the import fetches the
  // map from the network, three slow failed attempts where there is none, which ran into the timeout.
  const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', OPENHANDS_SUPPRESS_BANNER: '1', LITELLM_LOCAL_MODEL_COST_MAP: 'True', HOME: dirname(openhandsBinary()!) };
  const { stdout } = await execFileAsync(python, ['-c', script, url, KEY], { env, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

export const FLOWS: Record<string, Flow> = {
  async health(s) {
    const info = await s.api('/server_info', { key: null });
    return {
      alive: (await s.api('/alive', { key: null })).status,
      health: (await s.api('/health', { key: null })).status,
      ready: (await s.api('/ready', { key: null })).status,
      server_info: info.status,
      server_info_fields: sortedKeys(info.body),
      compatible_minor: String(info.body.version).split('.').slice(0, 2).join('.'),
      openapi: (await s.api('/openapi.json', { key: null })).status,
      docs: (await s.api('/docs', { key: null })).status,
      redoc: (await s.api('/redoc', { key: null })).status,
    };
  },

  async auth(s) {
    return {
      no_key: (await s.api('/api/conversations/search', { key: null })).status,
      wrong_key: (await s.api('/api/conversations/search', { key: 'wrong' })).status,
      right_key: (await s.api('/api/conversations/search')).status,
    };
  },

  async validation(s) {
    const empty = await s.api('/api/conversations', { method: 'POST', body: {} });
    const badLlm = await s.api('/api/conversations', { method: 'POST', body: { agent: { kind: 'Agent', llm: {} }, workspace: { kind: 'LocalWorkspace', working_dir: s.workDir } } });
    const notUuid = await s.api('/api/conversations/not-a-uuid');
    const missing = await s.api('/api/conversations/00000000-0000-4000-8000-000000000000');
    return {
      empty: empty.status,
      empty_locs: locs(empty.body),
      bad_llm: badLlm.status,
      bad_llm_locs: locs(badLlm.body),
      not_uuid: notUuid.status,
      not_uuid_locs: locs(notUuid.body),
      missing: missing.status,
    };
  },

  /** A create without a message: the record a client gets back, and an idle conversation. */
  async create_idle(s) {
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s) });
    const id = r.body.id;
    const evs = await events(s, id);
    const pause = await s.api(`/api/conversations/${id}/pause`, { method: 'POST' });
    const del = await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
    return {
      status: r.status,
      fields: sortedKeys(r.body),
      execution_status: r.body.execution_status,
      events: kinds(evs),
      model_calls: s.llm.requests.length,
      pause: pause.status,
      delete: del.status,
      after_delete: (await s.api(`/api/conversations/${id}`)).status,
    };
  },

  /**
   * A create with an initial message and `run: false`, as the Python SDK sends it: OpenHands starts
   * the run anyway. Then POST /run on the finished conversation, with nothing new to answer.
   */
  async create_with_message(s) {
    s.llm.push(finish('All done.'));
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { initial_message: text('Say done.', false) }) });
    const id = r.body.id;
    const end = await settled(s, id);
    const evs = await events(s, id);
    const callsBefore = s.llm.requests.length;
    const run = await s.api(`/api/conversations/${id}/run`, { method: 'POST' });
    // Give a wrongly started run the time to call the model and record something.
    await new Promise((res) => setTimeout(res, 3000));
    const after = await events(s, id);
    return {
      status: r.status,
      end,
      events: kinds(evs),
      updates: updates(evs),
      offered: offered(s, 0),
      model_calls: callsBefore,
      rerun: run.status,
      rerun_model_calls: s.llm.requests.length - callsBefore,
      rerun_new_events: after.slice(evs.length).map((e) => e.kind),
      rerun_status: await status(s, id),
    };
  },

  /** Message, run, one real terminal command, finish; a second message continues it. */
  async tool_run(s) {
    s.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo parity-$((40+2))' } }] }, finish('Printed it.'));
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s) });
    const id = r.body.id;
    const send = await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('Print parity-42.') });
    const run = await s.api(`/api/conversations/${id}/run`, { method: 'POST' });
    const end = await settled(s, id);
    const evs = await events(s, id);
    const obs = evs.find((e) => e.kind === 'ObservationEvent');
    const toolReply = s.llm.requests[1]?.messages.find((m) => m.role === 'tool');
    s.llm.push(finish('Again.'));
    const send2 = await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('Once more.', true) });
    const end2 = await settled(s, id);
    const evs2 = await events(s, id);
    const byId = new Map(evs2.map((e) => [e.id, e]));
    return {
      send: send.status,
      run: run.status,
      end,
      events: kinds(evs),
      // The conversation tree: each event's parent, by kind (state updates left out, as in kinds).
      parents: evs2.filter((e) => !isUpdate(e)).map((e) => `${e.kind}<-${e.parent_id ? (byId.get(e.parent_id)?.kind ?? 'unknown') : 'root'}`),
      leaf_is_last: (await s.api(`/api/conversations/${id}`)).body.leaf_event_id === evs2.filter((e) => !isUpdate(e)).at(-1)?.id,
      updates: updates(evs),
      observation_tool: obs?.tool_name,
      tool_output_reached_model: JSON.stringify(toolReply?.content ?? '').includes('parity-42'),
      send2: send2.status,
      end2,
      events2: kinds(evs2.slice(evs.length)),
      updates2: updates(evs2.slice(evs.length)),
      model_calls: s.llm.requests.length,
    };
  },

  /** agent.tools names exactly what the model is offered, plus the built-ins. */
  async tools(s) {
    s.llm.push(finish('ok'));
    const body = startBody(s, { agent: agent(s, ['terminal']), initial_message: text('Hi.') });
    const r = await s.api('/api/conversations', { method: 'POST', body });
    await settled(s, r.body.id);
    return { offered: offered(s, 0) };
  },

  /** Fork after a run: the copy's events and status; a fork request naming an `agent` (no such field in 1.58). */
  async fork(s) {
    s.llm.push(finish('Done.'));
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { initial_message: text('Say done.') }) });
    const id = r.body.id;
    await settled(s, id);
    const fork = await s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: { title: 'copy' } });
    const withAgent = await s.api(`/api/conversations/${id}/fork`, { method: 'POST', body: { agent: agent(s, ['terminal']) } });
    return {
      status: fork.status,
      fields: sortedKeys(fork.body),
      execution_status: fork.body.execution_status,
      events: kinds(await events(s, fork.body.id)),
      with_agent: withAgent.status,
      with_agent_locs: withAgent.status === 422 ? locs(withAgent.body) : undefined,
    };
  },

  /** agent.llm.log_completions on: one LLMCompletionLogEvent per model call, its fields and the JSON it carries. */
  async completion_log(s) {
    s.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo logged' } }] }, finish('Logged.'));
    const body = startBody(s, { initial_message: text('Print logged.') });
    const a = body.agent as { llm: Record<string, unknown> };
    a.llm = { ...a.llm, log_completions: true };
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const end = await settled(s, r.body.id);
    const evs = await events(s, r.body.id);
    const logs = evs.filter((e) => e.kind === 'LLMCompletionLogEvent');
    const data = logs.map((e) => JSON.parse(e.log_data));
    return {
      status: r.status,
      end,
      // Without the logs: OpenHands emits them from a worker thread, so where they fall varies from run to run.
      events: kinds(evs.filter((e) => e.kind !== 'LLMCompletionLogEvent')),
      logs: logs.length,
      log_fields: sortedKeys(logs[0]),
      log_source: logs.map((e) => e.source),
      log_model: logs.map((e) => e.model_name),
      log_usage_id: logs.map((e) => e.usage_id),
      log_filename: logs.map((e) => /^openai__scripted-\d+\.\d{3}-[0-9a-f]{4}\.json$/.test(e.filename)),
      log_data_fields: sortedKeys(data[0]),
      log_data_usage_fields: sortedKeys(data[0]?.usage_summary),
    };
  },

  /**
   * The provider answers 429 with Retry-After, then the answer: the run waits and goes on. What a
   * client is told meanwhile: ours adds the state key rate_limited_until (listed as deliberate).
   */
  async rate_limit(s) {
    s.llm.push({ status: 429, errorMessage: 'Rate limit reached', retryAfterSeconds: 1 }, finish('After the wait.'));
    const body = startBody(s, { initial_message: text('Answer when you may.') });
    const a = body.agent as { llm: Record<string, unknown> };
    // OpenHands' own backoff (tenacity, 8-64 s by default) held to a second, as the Retry-After.
    a.llm = { ...a.llm, num_retries: 3, retry_min_wait: 1, retry_max_wait: 1, retry_multiplier: 1 };
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const end = await settled(s, r.body.id);
    const evs = await events(s, r.body.id);
    const u = updates(evs);
    return {
      status: r.status,
      end,
      events: kinds(evs),
      update_keys: u.keys,
      update_statuses: u.statuses,
      model_calls: s.llm.requests.length,
      info_fields: sortedKeys((await s.api(`/api/conversations/${r.body.id}`)).body),
    };
  },

  /**
   * A plugin's agents/*.md run as a sub-agent through the task tool (agent.tools naming task_tool_set):
   * what the parent records, the TaskObservation, and what each model call is offered and told.
   */
  async subagent(s) {
    const repo = pluginRepo(s.workDir);
    s.llm.push(
      { toolCalls: [{ name: 'task', arguments: { subagent_type: 'reviewer', description: 'review', prompt: 'Say what you think of parity.' } }] },
      finish('VERDICT: parity is fine.'),
      finish('Reviewed.'),
    );
    const body = startBody(s, { agent: agent(s, ['terminal', 'task_tool_set']), plugins: [{ source: repo }], initial_message: text('Have it reviewed.') });
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const end = await settled(s, r.body.id);
    const evs = await events(s, r.body.id);
    const obs = evs.find((e) => e.kind === 'ObservationEvent' && e.observation?.kind === 'TaskObservation')?.observation;
    const sub = s.llm.requests[1];
    const toolReply = s.llm.requests[2]?.messages.find((m) => m.role === 'tool');
    return {
      status: r.status,
      end,
      events: evs.filter((e) => !isUpdate(e)).map((e) => (e.kind === 'ActionEvent' ? `Action:${e.action?.kind}` : e.kind === 'ObservationEvent' ? `Observation:${e.observation?.kind}` : e.kind)),
      offered: offered(s, 0),
      sub_offered: offered(s, 1),
      sub_prompt_in_system: JSON.stringify(sub?.messages[0] ?? '').includes('Start every answer with VERDICT'),
      sub_last_message: sub?.messages.at(-1)?.role,
      sub_task_in_message: JSON.stringify(sub?.messages.at(-1) ?? '').includes('Say what you think of parity.'),
      observation: obs ? { subagent: obs.subagent, status: obs.status, is_error: obs.is_error, text: obs.content?.[0]?.text, task_id: /^task_[0-9a-f]{8}$/.test(obs.task_id) } : undefined,
      answer_reached_parent: JSON.stringify(toolReply?.content ?? '').includes('VERDICT: parity is fine.'),
      model_calls: s.llm.requests.length,
      // The sub-agent's usage in the parent's stats (OpenHands: under task:<task id>).
      stats_keys: Object.keys((await s.api(`/api/conversations/${r.body.id}`)).body.stats?.usage_to_metrics ?? {}).map((k) => (k.startsWith('task:') ? 'task:<id>' : k)).sort(),
    };
  },

  /** litellm_extra_body.return_token_ids: a model that returns token ids (vLLM) gives a TokenEvent per call. */
  async token_ids(s) {
    s.llm.push({ toolCalls: [{ name: 'finish', arguments: { message: 'Tokens.' } }], tokenIds: { prompt: [11, 12, 13], response: [21, 22] } });
    const body = startBody(s, { initial_message: text('Say tokens.') });
    const a = body.agent as { llm: Record<string, unknown> };
    a.llm = { ...a.llm, litellm_extra_body: { return_token_ids: true } };
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const end = await settled(s, r.body.id);
    const evs = await events(s, r.body.id);
    const tokens = evs.filter((e) => e.kind === 'TokenEvent');
    return {
      status: r.status,
      end,
      events: kinds(evs),
      asked: s.llm.requests[0]?.body['return_token_ids'],
      tokens: tokens.map((e) => [e.source, e.prompt_token_ids, e.response_token_ids]),
    };
  },

  async websocket(s) {
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s) });
    const id = r.body.id;
    const ws = (path: string) => socket(`${s.url.replace('http', 'ws')}${path}`);
    const wrong = await ws(`/sockets/events/${id}?session_api_key=wrong`);
    const right = await ws(`/sockets/events/${id}?session_api_key=${KEY}`);
    return {
      wrong_key_close: wrong.close,
      wrong_key_frames: wrong.frames.map((f) => f.kind),
      first_frame: right.frames[0] ? `${right.frames[0].kind}:${right.frames[0].key}` : undefined,
      first_frame_fields: sortedKeys(right.frames[0]?.value),
    };
  },

  /**
   * The OpenAI-compatible gateway through the official `openai` client (session key as its API key):
   * the models, a chat completion (the system text in the system prompt, the reply the agent's final
   * answer, usage), one continued by its conversation id, a streamed one, a Responses request, and
   * what both refuse (status, and the message where it is a sentence) before any model call.
   */
  async openai_gateway(s) {
    await s.gatewayModel();
    const client = new OpenAI({ baseURL: `${s.url}/v1`, apiKey: KEY, maxRetries: 0 });
    const models = (await client.models.list()).data;
    s.llm.push({ ...finish('All done'), usage: { prompt_tokens: 10, completion_tokens: 3 } });
    const first = await client.chat.completions.create({ model: 'openhands_default', messages: [{ role: 'system', content: 'Answer in haiku' }, { role: 'user', content: 'hi' }] }).withResponse();
    const id = first.response.headers.get('x-openhands-serverconversation-id')!;
    const sawSystem = JSON.stringify(s.llm.requests[0]?.messages[0]?.content ?? '').includes('Answer in haiku');
    const info = await s.api(`/api/conversations/${id}`);
    const firstEvents = kinds(await events(s, id));
    s.llm.push(finish('Again'));
    const again = await client.chat.completions.create({ model: 'openhands_default', messages: [{ role: 'user', content: 'more' }] }, { headers: { 'X-OpenHands-ServerConversation-ID': id } }).withResponse();
    const secondUsers = s.llm.requests[1]?.messages.filter((m) => m.role === 'user').length;
    s.llm.push({ ...finish('Streamed'), usage: { prompt_tokens: 4, completion_tokens: 2 } });
    const chunks: any[] = [];
    for await (const c of await client.chat.completions.create({ model: 'openhands_default', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] })) chunks.push(c);
    s.llm.push({ ...finish('Resp'), usage: { prompt_tokens: 7, completion_tokens: 1 } });
    const resp = await client.responses.create({ model: 'openhands_default', input: 'hi', instructions: 'Be brief', metadata: { ticket: 'T-1' } }, { headers: { 'X-OpenHands-Observability-Tags': 'nightly, ci', 'X-OpenHands-Observability-Span-Name': 'gateway' } });
    const calls = s.llm.requests.length;
    const raw = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, ...headers }, body: JSON.stringify(body) });
      const detail = ((await r.json()) as { detail: unknown }).detail;
      return typeof detail === 'string' ? [r.status, detail] : [r.status];
    };
    // A header that is not JSON: OpenHands' 422 says so in a sentence, ours locates it (compared apart, deliberate.ts).
    const badMetadata = await raw('/v1/chat/completions', { model: 'openhands_default', messages: [{ role: 'user', content: 'hi' }] }, { 'X-OpenHands-Observability-Metadata': 'nope' });
    const user = [{ role: 'user', content: 'hi' }];
    const refused = {
      unknown_model: await raw('/v1/chat/completions', { model: 'gpt-4', messages: user }),
      unknown_profile: await raw('/v1/chat/completions', { model: 'openhands_other', messages: user }),
      no_user: await raw('/v1/chat/completions', { model: 'openhands_default', messages: [{ role: 'system', content: 's' }] }),
      audio: await raw('/v1/chat/completions', { model: 'openhands_default', messages: [{ role: 'user', content: [{ type: 'audio' }] }] }),
      no_model: await raw('/v1/chat/completions', { messages: user }),
      bad_metadata: badMetadata[0],
      bad_span_name: (await raw('/v1/chat/completions', { model: 'openhands_default', messages: user }, { 'X-OpenHands-Observability-Span-Name': 'x'.repeat(300) }))[0],
      bad_conversation_id: await raw('/v1/chat/completions', { model: 'openhands_default', messages: user }, { 'X-OpenHands-ServerConversation-ID': 'not-a-uuid' }),
      store: await raw('/v1/responses', { model: 'openhands_default', input: 'hi', store: true }),
      stream_response: await raw('/v1/responses', { model: 'openhands_default', input: 'hi', stream: true }),
      previous_response: await raw('/v1/responses', { model: 'openhands_default', input: 'hi', previous_response_id: 'resp_1' }),
      empty_input: await raw('/v1/responses', { model: 'openhands_default', input: '' }),
      wrong_key: (await fetch(`${s.url}/v1/models`, { headers: { authorization: 'Bearer wrong' } })).status,
      no_key: (await fetch(`${s.url}/v1/models`)).status,
    };
    return {
      models: models.map((m) => [m.id, m.object, m.owned_by, m.created]),
      chat_fields: sortedKeys(first.data),
      chat: [first.data.object, first.data.model, first.data.choices.map((c) => [c.index, c.finish_reason, c.message.role, c.message.content])],
      chat_usage: first.data.usage,
      chat_header: /^[0-9a-f-]{36}$/.test(id),
      system_text_in_prompt: sawSystem,
      conversation: [info.status, info.body.execution_status],
      conversation_events: firstEvents,
      continued: [again.response.headers.get('x-openhands-serverconversation-id') === id, again.data.choices[0]?.message.content, secondUsers],
      stream: chunks.map((c) => [c.object, c.choices.map((x: any) => [x.delta, x.finish_reason ?? null]), c.usage ?? null]),
      response_fields: sortedKeys(resp),
      response: [resp.object, resp.status, resp.model, resp.instructions, resp.metadata, resp.output_text, resp.output.map((o: any) => [o.type, o.role, o.status]), resp.tools, resp.tool_choice, resp.parallel_tool_calls],
      response_usage: resp.usage,
      model_calls: calls,
      refused,
      bad_metadata_detail: badMetadata[1] ?? 'located',
      refused_model_calls: s.llm.requests.length - calls,
    };
  },

  /** Conversation trees: navigate moves HEAD; the next message branches there; unknown event 404; null empties HEAD. */
  async conversation_tree(s) {
    s.llm.push(finish('first answer'), finish('second answer'), finish('branched answer'));
    const id = (await s.api('/api/conversations', { method: 'POST', body: startBody(s) })).body.id as string;
    const say = async (t: string) => {
      await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text(t, true) });
      await until('the answer', async () => (await events(s, id)).some((e) => e.kind === 'ActionEvent' && JSON.stringify(e).includes(t.replace('question', 'answer'))) && (await status(s, id)) === 'finished');
    };
    await say('first question');
    await say('second question');
    const firstUser = (await events(s, id)).find((e) => e.kind === 'MessageEvent' && e.source === 'user');
    const moved = await s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: firstUser.id } });
    await say('branched question');
    const all = await events(s, id);
    const branched = all.find((e) => e.kind === 'MessageEvent' && JSON.stringify(e.llm_message).includes('branched question'));
    const lastCall = s.llm.requests.at(-1)!;
    const unknown = await s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: 'no-such-event' } });
    const emptied = await s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: null } });
    const bad = await s.api(`/api/conversations/${id}/navigate`, { method: 'POST', body: { event_id: 7 } });
    return {
      moved: [moved.status, moved.body.leaf_event_id === firstUser.id],
      moved_fields: sortedKeys(moved.body),
      branched_parent: branched?.parent_id === firstUser.id,
      // The model saw the branch: the first question, not the second one nor its answer.
      model_saw: ['first question', 'second question', 'branched question'].map((t) => JSON.stringify(lastCall.messages).includes(t)),
      kept_in_log: all.some((e) => JSON.stringify(e).includes('second question')),
      final_response: (await s.api(`/api/conversations/${id}/agent_final_response`)).body,
      unknown: unknown.status,
      emptied: [emptied.status, emptied.body.leaf_event_id],
      bad: [bad.status, locs(bad.body)],
      missing_conversation: (await s.api('/api/conversations/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10/navigate', { method: 'POST', body: {} })).status,
    };
  },

  /**
   * Child conversations: the parent's configuration, the task as the first message, listed by the parent.
   * Shared isolation: OpenHands makes the workspace a git repository without commits, where its
   * worktree isolation fails (git worktree add of an unborn HEAD).
   */
  async child_conversation(s) {
    const wd = mkdtempSync(join(s.workDir, 'child-'));
    s.llm.push(finish('child done'));
    const parent = (await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: wd }, tags: { team: 'core' } }) })).body.id as string;
    const r = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'count the files', title: 'counter', isolation: 'shared' } });
    const child = r.body.conversation_id as string;
    await until('the child to finish', async () => (await status(s, child)) === 'finished');
    const info = (await s.api(`/api/conversations/${child}`)).body;
    const parentInfo = (await s.api(`/api/conversations/${parent}`)).body;
    const childEvents = await events(s, child);
    return {
      created: r.status,
      response_fields: sortedKeys(r.body),
      response: [r.body.parent_conversation_id === parent, r.body.title, r.body.workspace === wd, r.body.isolation, r.body.url ?? null],
      child: [info.parent_conversation_id === parent, info.title, info.tags, info.execution_status],
      child_kinds: kinds(childEvents),
      task_sent: JSON.stringify(s.llm.requests.at(-1)?.messages).includes('count the files'),
      parent_lists: [parentInfo.sub_conversation_ids.length, parentInfo.sub_conversation_ids.includes(child)],
      parent_status: parentInfo.execution_status,
      empty_task: [(await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: '' } })).status],
      unknown_parent: (await s.api('/api/conversations/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10/children', { method: 'POST', body: { task: 'x' } })).status,
    };
  },

  /**
   * Git worktrees: a start request's `worktree` and a child's isolation 'worktree' in a repository
   * (the checkout, its branch, the working directory reported, removal at deletion with the branch
   * kept), and `worktree` outside a repository (works in place). Where the worktrees root is differs
   * (OpenHands: OH_CONVERSATION_WORKTREE_ROOT; ours: the workspace root), so only the path below it is compared.
   */
  async git_worktrees(s) {
    const g = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-C', cwd, ...args], { encoding: 'utf8' }).trim();
    const repo = mkdtempSync(join(s.workDir, 'wt-repo-'));
    mkdirSync(join(repo, 'sub'));
    g(repo, 'init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'sub', 'a.txt'), 'v1\n');
    g(repo, 'add', '.');
    g(repo, 'commit', '-q', '-m', 'v1');
    g(repo, 'checkout', '-q', '-b', 'other');
    const tail = (p: string, id: string) => p.slice(p.indexOf(`/${id}/`) + 1).replace(id, '<id>').replace(/wt-repo-[^/]+/, '<repo>');
    const conv = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: join(repo, 'sub') }, worktree: true }) });
    const id = conv.body.id as string;
    const wd = conv.body.workspace.working_dir as string;
    const started = {
      status: conv.status,
      working_dir: tail(wd, id),
      file: readFileSync(join(wd, 'a.txt'), 'utf8'),
      branch: g(wd, 'rev-parse', '--abbrev-ref', 'HEAD') === `openhands/${id}`,
      listed: g(repo, 'worktree', 'list').includes(id),
    };
    const deleted = (await s.api(`/api/conversations/${id}`, { method: 'DELETE' })).status;
    const after = { deleted, checkout_gone: !existsSync(wd), listed: g(repo, 'worktree', 'list').includes(id), branch_kept: g(repo, 'branch', '--list', `openhands/${id}`) !== '' };

    s.llm.push(finish('child done'));
    const parent = (await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: repo } }) })).body.id as string;
    const r = await s.api(`/api/conversations/${parent}/children`, { method: 'POST', body: { task: 'look around' } });
    const child = r.body.conversation_id as string;
    await until('the child to finish', async () => (await status(s, child)) === 'finished');
    const childInfo = (await s.api(`/api/conversations/${child}`)).body;
    const childRun = {
      created: r.status,
      isolation: r.body.isolation,
      workspace: tail(r.body.workspace, child),
      info_working_dir: childInfo.workspace.working_dir === r.body.workspace,
      branch: g(r.body.workspace, 'rev-parse', '--abbrev-ref', 'HEAD') === `openhands/${child}`,
      told: JSON.stringify(s.llm.requests.at(-1)?.messages).includes(`openhands/${child}`),
    };

    // Beside the side's working directory, not in it: OpenHands 1.58 runs `git init` in the working
    // directory of every conversation it starts (EventService._ensure_workspace_is_git_repo), so once an
    // earlier flow has started one there, s.workDir is a repository without commits; a directory below
    // it would be inside that repository, and 1.58's `git worktree add ... HEAD` of an unborn HEAD fails
    // with an unhandled 500 (after which its server drops the connection, failing the next flow's first
    // request too). Alone the flow passed only because no conversation had run in s.workDir yet.
    const plain = mkdtempSync(join(dirname(s.workDir), 'wt-plain-'));
    const inPlace = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { workspace: { kind: 'LocalWorkspace', working_dir: plain }, worktree: true }) });
    return { started, after, child: childRun, not_a_repository: [inPlace.status, inPlace.body.workspace.working_dir === plain] };
  },

  /** /goal loops: objective, judge, followup, complete; stop and resume; the busy and bad requests. */
  async goal_loop(s) {
    const verdict = (v: object): ScriptStep => ({ content: JSON.stringify(v) });
    s.llm.push(finish('first try'), verdict({ score: 0.4, complete: false, missing: 'the tests were not run' }), finish('ran them'), verdict({ score: 1, complete: true, missing: '' }));
    const id = (await s.api('/api/conversations', { method: 'POST', body: startBody(s) })).body.id as string;
    const started = await s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'make the tests pass', max_iterations: 3 } });
    const goals = async () => (await events(s, id)).filter((e) => isUpdate(e) && e.key === 'goal').map((e) => e.value);
    await until('the goal to complete', async () => (await goals()).at(-1)?.status === 'complete');
    await settled(s, id);
    const judge = s.llm.requests[1]!;
    const evs = await events(s, id);
    return {
      started: [started.status, started.body],
      goals: await goals(),
      user_texts: evs.filter((e) => e.kind === 'MessageEvent' && e.source === 'user').map((e) => e.llm_message.content[0].text),
      kinds: kinds(evs),
      judge_call: [judge.messages.map((m) => m.role), (judge.tools ?? []).length, JSON.stringify(judge.messages[1]?.content).includes('make the tests pass')],
      model_calls: s.llm.requests.length,
      no_resumable: [(await s.api(`/api/conversations/${id}/goal/resume`, { method: 'POST' })).status],
      stop_without_loop: (await s.api(`/api/conversations/${id}/goal/stop`, { method: 'POST' })).status,
      empty_objective: (await s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: ' ' } })).status,
      bad_max: [(await s.api(`/api/conversations/${id}/goal`, { method: 'POST', body: { objective: 'x', max_iterations: 0 } })).status],
      unknown: (await s.api('/api/conversations/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10/goal', { method: 'POST', body: { objective: 'x' } })).status,
    };
  },

  /** load_plugin: a plugin of a registered marketplace (a local git repository); the refusals. */
  async load_plugin(s) {
    const repo = mkdtempSync(join(dirname(s.workDir), 'marketplace-'));
    const put = (path: string, body: string) => (mkdirSync(dirname(join(repo, path)), { recursive: true }), writeFileSync(join(repo, path), body));
    put('.plugin/marketplace.json', JSON.stringify({ name: 'acme', owner: { name: 'Acme' }, plugins: [{ name: 'house-rules', source: './plugins/house-rules' }] }));
    put('plugins/house-rules/.plugin/plugin.json', JSON.stringify({ name: 'house-rules', version: '1.0.0', description: 'House rules' }));
    put('plugins/house-rules/skills/house-style/SKILL.md', '---\nname: house-style\ndescription: The house style\n---\nIndent with tabs.\n');
    const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=Parity', '-c', 'user.email=parity@example.com', ...args], { cwd: repo, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('commit', '-q', '-m', 'marketplace');
    const body = startBody(s);
    (body['agent'] as Record<string, unknown>)['agent_context'] = { registered_marketplaces: [{ name: 'acme', source: repo }] };
    const id = (await s.api('/api/conversations', { method: 'POST', body })).body.id as string;
    const call = async (b: unknown) => {
      const r = await s.api(`/api/conversations/${id}/load_plugin`, { method: 'POST', body: b });
      return [r.status, typeof r.body?.detail === 'string' ? r.body.detail : locs(r.body)];
    };
    return {
      loaded: await call({ plugin_ref: 'house-rules@acme' }),
      unknown_plugin: await call({ plugin_ref: 'nothing@acme' }),
      unknown_anywhere: await call({ plugin_ref: 'nothing' }),
      unknown_marketplace: await call({ plugin_ref: 'house-rules@other' }),
      bad_ref: await call({ plugin_ref: '@acme' }),
      no_ref: await call({}),
      unknown_conversation: (await s.api('/api/conversations/0b6d9c1e-2f4a-4c1b-9a51-1b7f4c9d2e10/load_plugin', { method: 'POST', body: { plugin_ref: 'x' } })).status,
    };
  },

  /** POST /api/sub-agents: the project's agent definitions (built-ins compared apart). */
  async sub_agents(s) {
    const wd = mkdtempSync(join(s.workDir, 'agents-'));
    mkdirSync(join(wd, '.agents', 'agents'), { recursive: true });
    mkdirSync(join(wd, '.openhands', 'agents'), { recursive: true });
    writeFileSync(join(wd, '.agents', 'agents', 'alpha.md'), '---\nname: alpha\ndescription: "First <example>when X</example>"\nmodel: fast\nskills: s1, s2\ntools: [terminal]\ncolor: blue\nmax_iteration_per_run: 3\npermission_mode: never_confirm\nextra_field: 1\n---\nAlpha prompt\n');
    writeFileSync(join(wd, '.agents', 'agents', 'README.md'), 'not an agent');
    writeFileSync(join(wd, '.openhands', 'agents', 'alpha.md'), '---\nname: alpha\ndescription: Shadowed\n---\n');
    writeFileSync(join(wd, '.openhands', 'agents', 'beta.md'), 'Beta prompt\n');
    const r = await s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false, load_builtin: false } });
    const withBuiltins = await s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false } });
    const bad = await s.api('/api/sub-agents', { method: 'POST', body: { project_dir: 5 } });
    return {
      status: r.status,
      agents: (r.body.agents ?? []).map((a: any) => ({ ...a, source: typeof a.source === 'string' ? a.source.slice(wd.length) : a.source })),
      builtin_names: (withBuiltins.body.agents ?? []).filter((a: any) => a.is_builtin).map((a: any) => a.name).sort(),
      bad: [bad.status, locs(bad.body)],
    };
  },

  /**
   * POST /api/mcp/test against the test tools' MCP server as a stdio child: the tools, a tool call
   * (a result, a tool error, an unknown tool), a server that cannot start, and refused requests.
   */
  async mcp_test(s) {
    const server = { type: 'stdio', command: process.execPath, args: [STDIO_SERVER] };
    const test = (body: unknown) => s.api('/api/mcp/test', { method: 'POST', body });
    const echo = await test({ server, tool_call: { name: 'echo', arguments: { text: 'hi' } } });
    const failing = await test({ server: { command: process.execPath, args: [STDIO_SERVER] }, tool_call: { name: 'fail' } });
    const unknown = await test({ server, tool_call: { name: 'nope' } });
    const missing = await test({ server: { type: 'stdio', command: '/nonexistent/mcp-server' } });
    const empty = await test({});
    const badTimeout = await test({ server, timeout: 0 });
    return {
      echo: echo.status,
      echo_fields: sortedKeys(echo.body),
      tools: [...(echo.body.tools ?? [])].sort(),
      echo_result: echo.body.tool_result,
      failing_result: failing.body.tool_result,
      unknown_is_error: unknown.body.tool_result?.is_error,
      missing: missing.status,
      missing_ok: missing.body.ok,
      missing_kind: missing.body.error_kind,
      empty: empty.status,
      empty_locs: locs(empty.body),
      bad_timeout: badTimeout.status,
      bad_timeout_locs: locs(badTimeout.body),
    };
  },

  /**
   * The MCP OAuth install flow against an OAuth-protected MCP server (the MCP SDK's authorization
   * server): start, status while authorizing, the browser's consent (a redirect to the loopback
   * callback), the callback, the outcome; and the refusals (not OAuth, unknown job, bad callback URL).
   */
  async mcp_oauth(s) {
    const oauth = await startOAuthMcpServer();
    try {
      const server = { type: 'http', url: oauth.url, auth: { strategy: 'oauth2', authentication: { type: 'oauth' } } };
      const start = await s.api('/api/mcp/oauth/start', { method: 'POST', body: { server } });
      const id = start.body.job_id as string;
      const authorizing = await s.api(`/api/mcp/oauth/status/${id}`);
      const consent = await fetch(start.body.authorization_url, { redirect: 'manual' });
      const callbackUrl = consent.headers.get('location')!;
      const foreign = await s.api(`/api/mcp/oauth/callback/${id}`, { method: 'POST', body: { callback_url: 'https://example.com/callback' } });
      const done = await s.api(`/api/mcp/oauth/callback/${id}`, { method: 'POST', body: { callback_url: callbackUrl } });
      const status = await s.api(`/api/mcp/oauth/status/${id}`);
      return {
        start: start.status,
        start_fields: sortedKeys(start.body),
        authorizing: authorizing.body.status,
        authorizing_fields: sortedKeys(authorizing.body),
        callback_ready: authorizing.body.callback_ready,
        redirect_uri: new URL(start.body.authorization_url).searchParams.get('redirect_uri')?.replace(/\d+/, 'PORT'),
        foreign_callback: foreign.status,
        done: done.status,
        done_status: done.body.status,
        done_tools: [...(done.body.tools ?? [])].sort(),
        done_fields: sortedKeys(done.body),
        oauth_state_fields: sortedKeys(done.body.oauth_state),
        status_after: status.body.status,
        grants: oauth.grants,
        not_oauth: (await s.api('/api/mcp/oauth/start', { method: 'POST', body: { server: { type: 'stdio', command: process.execPath } } })).status,
        unknown_job: (await s.api('/api/mcp/oauth/status/0123456789abcdef')).status,
      };
    } finally {
      await oauth.close();
    }
  },

  // The agent server's named secrets (/api/settings/secrets): what a client stores, lists and reads back.
  async settings_secrets(s) {
    const r = async (path: string, method = 'GET', body?: unknown) => {
      const res = await s.api(path, { method, ...(body !== undefined ? { body } : {}) });
      return [res.status, res.body];
    };
    const put = (body: unknown) => r('/api/settings/secrets', 'PUT', body);
    /** 422 locations, or `string detail` where the answer is a bare sentence. */
    const locs = async (path: string, method = 'GET', body?: unknown) => {
      const res = await s.api(path, { method, ...(body !== undefined ? { body } : {}) });
      return [res.status, Array.isArray(res.body?.detail) ? res.body.detail.map((i: any) => i.loc) : typeof res.body?.detail];
    };
    const view: View = { empty: await r('/api/settings/secrets') };
    view['put'] = await put({ name: 'PARITY_TOKEN', value: 'tok-parity-one', description: 'for parity' });
    view['put_plain'] = await put({ name: 'other_token', value: 'tok-parity-two' });
    view['upsert'] = await put({ name: 'PARITY_TOKEN', value: 'tok-parity-three', description: null });
    view['list'] = await r('/api/settings/secrets');
    view['value'] = await r('/api/settings/secrets/PARITY_TOKEN');
    view['unknown_profile'] = await r('/api/settings/secrets?agent_profile_id=no-such-profile');
    view['missing_name_and_value'] = await locs('/api/settings/secrets', 'PUT', {});
    view['wrong_type'] = await locs('/api/settings/secrets', 'PUT', { name: 'A', value: 5 });
    view['refusals'] = {
      put_bad_name: await locs('/api/settings/secrets', 'PUT', { name: '1bad', value: 'v' }),
      blank_value: await locs('/api/settings/secrets', 'PUT', { name: 'A', value: '  ' }),
      redacted_value: await locs('/api/settings/secrets', 'PUT', { name: 'A', value: '**********' }),
      get_bad_name: await locs('/api/settings/secrets/bad-name'),
      delete_bad_name: await locs('/api/settings/secrets/bad-name', 'DELETE'),
    };
    view['delete'] = await r('/api/settings/secrets/PARITY_TOKEN', 'DELETE');
    view['delete_again'] = await r('/api/settings/secrets/PARITY_TOKEN', 'DELETE');
    view['get_deleted'] = await r('/api/settings/secrets/PARITY_TOKEN');
    await r('/api/settings/secrets/other_token', 'DELETE');
    view['left'] = await r('/api/settings/secrets');
    return view;
  },

  // The Python SDK's RemoteWorkspace.get_secrets(): stored secrets handed to a conversation as
  // LookupSecrets of the server's own URL (with the session key); a command naming one gets its value.
  async settings_secret_lookup(s) {
    await s.api('/api/settings/secrets', { method: 'PUT', body: { name: 'LOOKED_UP', value: 'looked-up-value-0123' } });
    s.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'printf %s "$LOOKED_UP" | wc -c' } }] }, finish('Counted.'));
    const secrets = { LOOKED_UP: { kind: 'LookupSecret', url: `${s.url}/api/settings/secrets/LOOKED_UP`, headers: { 'X-Session-API-Key': KEY } } };
    const r = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { secrets }) });
    const id = r.body.id;
    await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('Count it.', true) });
    const end = await settled(s, id);
    const obs = (await events(s, id)).find((e) => e.kind === 'ObservationEvent');
    await s.api('/api/settings/secrets/LOOKED_UP', { method: 'DELETE' });
    return { start: r.status, end, output: obs?.observation?.content?.[0]?.text?.trim().split('\n')[0] };
  },

  // The stored settings (GET/PATCH /api/settings, /api/settings/mcp/{key}, the two forms) as a
  // client sees them: the fields both servers keep, masked and plaintext, the MCP routes' answers.
  // Left as found (OpenHands' gateway flow reads the conversation settings).
  async settings_document(s) {
    const call = async (path: string, method = 'GET', body?: unknown, headers: Record<string, string> = {}) => {
      const r = await fetch(`${s.url}${path}`, { method, headers: { 'x-session-api-key': KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
      return { status: r.status, body: (await r.json()) as any };
    };
    /** What both servers keep: the LLM's model, endpoint and key, the MCP servers, the conversation defaults they share. */
    const kept = (r: { status: number; body: any }) => {
      if (r.status >= 300) return [r.status, typeof r.body?.detail];
      const { agent_settings: a, conversation_settings: c } = r.body;
      return [r.status, { llm: { model: a.llm.model, base_url: a.llm.base_url === s.llm.url ? '<the scripted model>' : (a.llm.base_url ?? null), api_key: a.llm.api_key ?? null }, mcp_config: a.mcp_config, conversation: { max_iterations: c.max_iterations, confirmation_mode: c.confirmation_mode, security_analyzer: c.security_analyzer }, key_set: r.body.llm_api_key_is_set, misc: r.body.misc_settings, active_profile: r.body.active_profile }];
    };
    const S = '/api/settings';
    const view: View = {};
    const before = await call(S);
    view['defaults'] = { key_set: before.body.llm_api_key_is_set, mcp_config: before.body.agent_settings.mcp_config, conversation: kept(before)[1] && (kept(before)[1] as any).conversation, misc: before.body.misc_settings };
    view['patched'] = kept(
      await call(S, 'PATCH', {
        agent_settings_diff: { llm: { model: 'openai/parity-stored', base_url: s.llm.url, api_key: 'sk-parity-stored' }, mcp_config: { web: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer parity-header', 'X-Old': 'old' } } } },
        conversation_settings_diff: { max_iterations: 9 },
        misc_settings_diff: { ui: { theme: 'dark' } },
      }),
    );
    view['masked'] = kept(await call(S));
    view['plaintext'] = kept(await call(S, 'GET', undefined, { 'X-Expose-Secrets': 'plaintext' }));
    view['encrypted'] = (await call(S, 'GET', undefined, { 'X-Expose-Secrets': 'encrypted' })).status;
    view['bad_expose_header'] = (await call(S, 'GET', undefined, { 'X-Expose-Secrets': 'bogus' })).status;
    view['remove_header'] = kept(await call(S, 'PATCH', { agent_settings_diff: { mcp_config: { web: { headers: { 'X-Old': null } } } } }));
    view['empty_patch'] = kept(await call(S, 'PATCH', {}));
    view['invalid_patch'] = (await call(S, 'PATCH', { conversation_settings_diff: { max_iterations: 0 } })).status;
    view['unknown_profile'] = kept(await call(S, 'PATCH', { active_profile: 'no-such-profile' }));
    view['mcp'] = {
      add: kept(await call(`${S}/mcp/tools`, 'POST', { command: 'node', args: ['server.js'], env: { TOKEN: 'env-parity' } })),
      add_again: kept(await call(`${S}/mcp/tools`, 'POST', { command: 'node' })),
      extra_field: (await call(`${S}/mcp/other`, 'POST', { command: 'node', bogus: 1 })).status,
      change: kept(await call(`${S}/mcp/tools`, 'PATCH', { args: ['other.js'] })),
      change_missing: kept(await call(`${S}/mcp/missing`, 'PATCH', { args: [] })),
      remove_missing: kept(await call(`${S}/mcp/missing`, 'DELETE')),
      remove: kept(await call(`${S}/mcp/tools`, 'DELETE')),
    };
    view['mcp_without_command_or_url'] = (await call(`${S}/mcp/nothing`, 'POST', {})).status;
    await call(`${S}/mcp/nothing`, 'DELETE');
    // The key sent back as GET showed it (masked).
    view['masked_key_saved_back'] = kept(await call(S, 'PATCH', { agent_settings_diff: { llm: { api_key: '**********' } } }));

    // A client's next agent, built from GET as RemoteWorkspace.get_llm() does: the model request goes to the stored model with the stored key.
    await call(S, 'PATCH', { agent_settings_diff: { llm: { api_key: 'sk-parity-stored' } } });
    const llm = (await call(S, 'GET', undefined, { 'X-Expose-Secrets': 'plaintext' })).body.agent_settings.llm;
    let seen: unknown;
    s.llm.push((req) => {
      seen = { model: req.model, auth: req.headers['authorization'] };
      return { toolCalls: [{ name: 'finish', arguments: { message: 'Built from the settings.' } }] };
    });
    const started = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: { ...agent(s), llm: { model: llm.model, base_url: llm.base_url, api_key: llm.api_key, usage_id: 'agent' } } }) });
    await s.api(`/api/conversations/${started.body.id}/events`, { method: 'POST', body: text('Hello.', true) });
    view['client_conversation'] = { start: started.status, end: await settled(s, started.body.id), model_request: await until('the model request', async () => seen) };

    // The Python SDK itself (RemoteWorkspace.get_llm() / get_mcp_config(), what its users call to build an agent) reads the stored settings.
    view['python_sdk'] = await pythonSdkSettings(s.url);

    const form = (r: { body: any }) => ({ model_name: r.body.model_name, fields: r.body.sections.map((x: any) => [x.key, x.fields.map((f: any) => f.key)]) });
    view['conversation_schema'] = form(await call(`${S}/conversation-schema`));
    const agentForm = (await call(`${S}/agent-schema`)).body;
    const fields = agentForm.sections.flatMap((x: any) => x.fields);
    view['agent_schema'] = { model_name: agentForm.model_name, api_key_secret: fields.find((f: any) => f.key === 'llm.api_key')?.secret, has_model: fields.some((f: any) => f.key === 'llm.model') };

    // Where the server itself applies them: the conversations of the OpenAI-compatible gateway take the
    // stored conversation settings (confirmation without the LLM analyzer: every action waits).
    await s.gatewayModel();
    await call(S, 'PATCH', { conversation_settings_diff: { max_iterations: 7, confirmation_mode: true, security_analyzer: 'none' } });
    s.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo parity' } }] });
    const gateway = await fetch(`${s.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` }, body: JSON.stringify({ model: 'openhands_default', messages: [{ role: 'user', content: 'run it' }] }) });
    const convs = (await s.api('/api/conversations/search?limit=100')).body.items as any[];
    const made = convs.find((c) => c.max_iterations === 7);
    view['gateway_conversation'] = { status: gateway.status, confirmation_policy: made?.confirmation_policy?.kind, security_analyzer: made?.security_analyzer ?? null, execution_status: made?.execution_status };
    if (made) await s.api(`/api/conversations/${made.id}`, { method: 'DELETE' });

    // Back as found.
    await call(S, 'PATCH', { agent_settings_diff: { llm: { api_key: null, base_url: null, model: before.body.agent_settings.llm.model }, mcp_config: { web: null } }, conversation_settings_diff: { max_iterations: 500, confirmation_mode: false, security_analyzer: 'llm' }, misc_settings_diff: { ui: null } });
    return view;
  },

  // Shared LLM credentials (/api/llm/provider-connections): the key is write-only.
  async provider_connections(s) {
    const P = '/api/llm/provider-connections';
    const shape = (c: any) => (c && typeof c === 'object' && 'id' in c ? { ...c, id: /^[0-9a-f]{32}$/.test(c.id), created_at: typeof c.created_at, updated_at: typeof c.updated_at } : c);
    const r = async (path: string, method = 'GET', body?: unknown) => {
      const res = await s.api(path, { method, ...(body !== undefined ? { body } : {}) });
      const b = res.status === 422 && Array.isArray(res.body.detail) ? res.body.detail.map((i: any) => i.loc).sort() : Array.isArray(res.body) ? res.body.map(shape) : shape(res.body);
      return [res.status, b];
    };
    const created = await s.api(P, { method: 'POST', body: { display_name: 'Parity', api_key: 'sk-parity-conn', base_url: 'http://models.local' } });
    const id = created.body.id;
    const detailKind = async (method: string, path: string, body: unknown) => {
      const res = await s.api(path, { method, body });
      return [res.status, Array.isArray(res.body.detail) ? res.body.detail.map((i: any) => i.loc) : typeof res.body.detail];
    };
    return {
      created: [created.status, shape(created.body)],
      list: await r(P),
      patch: await r(`${P}/${id}`, 'PATCH', { base_url: null, provider: 'openai', api_key: 'sk-rotated' }),
      patch_name: await r(`${P}/${id}`, 'PATCH', { display_name: 'Renamed' }),
      missing: await r(P, 'POST', {}),
      bad: await r(P, 'POST', { display_name: '', api_key: 'k', extra: 1 }),
      blank_key: await r(P, 'POST', { display_name: 'x', api_key: '  ' }),
      redacted_key: await r(`${P}/${id}`, 'PATCH', { api_key: '**********' }),
      null_name: await r(`${P}/${id}`, 'PATCH', { display_name: null }),
      unknown: await r(`${P}/nope`, 'PATCH', { api_key: 'x' }),
      refusals: { empty_patch: await detailKind('PATCH', `${P}/${id}`, {}), clear_key: await detailKind('PATCH', `${P}/${id}`, { api_key: null }) },
      deleted: await r(`${P}/${id}`, 'DELETE'),
      deleted_again: JSON.stringify(await r(`${P}/${id}`, 'DELETE')).replace(id, '<id>'),
      left: await r(P),
    };
  },

  // The GUI's saved workspaces (/api/workspaces).
  async workspaces(s) {
    const r = async (path: string, method = 'GET', body?: unknown) => {
      const res = await s.api(path, { method, ...(body !== undefined ? { body } : {}) });
      return [res.status, res.status === 422 ? res.body.detail.map((i: any) => i.loc).sort() : res.body];
    };
    return {
      empty: await r('/api/workspaces'),
      add: await r('/api/workspaces', 'POST', { workspaces: [{ id: '/w/a', name: 'a', path: '/w/a', parentPath: '/w' }, { id: '/w/a', name: 'dup', path: '/w/a' }, { id: '/w/b', name: 'b', path: '/w/b', parent_path: '/w' }, { id: '/w/c', name: 'c', path: '/w/c', parentPath: null }] }),
      add_again: await r('/api/workspaces', 'POST', { workspaces: [{ id: '/w/a', name: 'a2', path: '/w/a' }] }),
      parents: await r('/api/workspaces/parents', 'POST', { parents: [{ id: '/w', name: 'w', path: '/w', unknown: 1 }, { id: '/w', name: 'w2', path: '/w' }] }),
      bad_item: await r('/api/workspaces', 'POST', { workspaces: [{ id: '', name: 'x' }] }),
      bad_parent: await r('/api/workspaces/parents', 'POST', { parents: [{ id: 'x', name: 'n'.repeat(257), path: '/x' }] }),
      no_path: await r('/api/workspaces', 'DELETE'),
      remove: await r('/api/workspaces?path=/w/a', 'DELETE'),
      remove_again: await r('/api/workspaces?path=/w/a', 'DELETE'),
      remove_parent: await r('/api/workspaces/parents?path=/w', 'DELETE'),
      remove_parent_again: await r('/api/workspaces/parents?path=/w', 'DELETE'),
      left: await r('/api/workspaces'),
      cleanup: [await r('/api/workspaces?path=/w/b', 'DELETE'), await r('/api/workspaces?path=/w/c', 'DELETE')],
    };
  },

  // The workspace session cookie (/api/auth/workspace-session), on loopback (a secure context), behind a proxy, and without the key.
  async workspace_session(s) {
    const cookie = async (method: string, headers: Record<string, string>) => {
      const res = await fetch(`${s.url}/api/auth/workspace-session`, { method, headers });
      return [res.status, res.headers.get('set-cookie')];
    };
    return {
      mint: await cookie('POST', { 'x-session-api-key': KEY }),
      mint_proxied: await cookie('POST', { 'x-session-api-key': KEY, 'x-forwarded-host': 'sandbox.example.com' }),
      mint_https: await cookie('POST', { 'x-session-api-key': KEY, 'x-forwarded-host': 'sandbox.example.com', 'x-forwarded-proto': 'https' }),
      clear: await cookie('DELETE', { 'x-session-api-key': KEY }),
      clear_proxied: await cookie('DELETE', { 'x-session-api-key': KEY, 'x-forwarded-host': 'sandbox.example.com' }),
      no_key: await cookie('POST', {}),
      wrong_key: await cookie('DELETE', { 'x-session-api-key': 'wrong' }),
    };
  },

  // Deferred initialization (/api/init) on servers not started deferred (the deferred_init flow starts dormant ones).
  async init(s) {
    const r = async (method: string, headers: Record<string, string>) => {
      const res = await fetch(`${s.url}/api/init`, { method, headers: { 'content-type': 'application/json', ...headers }, ...(method === 'POST' ? { body: '{}' } : {}) });
      return [res.status, await res.json()];
    };
    return {
      status: await r('GET', {}),
      no_key: await r('POST', {}),
      wrong_key: await r('POST', { 'x-init-api-key': 'wrong' }),
      // Both run with OH_SECRET_KEY (servers.ts): it is the init key, not the session key.
      session_key: await r('POST', { 'x-init-api-key': KEY }),
      secret_key: await r('POST', { 'x-init-api-key': SECRET_KEY }),
    };
  },
  ...PROFILE_FLOWS,
  ...SECURITY_FLOWS,
  ...ACP_FLOWS,
  ...SECRETS_FLOWS,
  ...MCP_FORM_FLOWS,
  ...AGENT_SETTINGS_FLOWS,

  /**
   * A project agent naming a skill that exists nowhere, beside one naming a project skill: what
   * POST /api/sub-agents lists (1.58 lists definitions as written, skills unresolved) and what the
   * task tool of a conversation in that project offers the model (1.58 skips the unresolvable one).
   */
  async sub_agents_missing_skill(s) {
    const wd = mkdtempSync(join(s.workDir, 'agents-skill-'));
    mkdirSync(join(wd, '.agents', 'agents'), { recursive: true });
    mkdirSync(join(wd, '.agents', 'skills', 'house-style'), { recursive: true });
    writeFileSync(join(wd, '.agents', 'skills', 'house-style', 'SKILL.md'), '---\nname: house-style\ndescription: How we write\n---\nWrite plainly.\n');
    writeFileSync(join(wd, '.agents', 'agents', 'stylist.md'), '---\nname: stylist\ndescription: Fixes style\nskills: [house-style]\n---\nYou fix style.\n');
    writeFileSync(join(wd, '.agents', 'agents', 'dreamer.md'), '---\nname: dreamer\ndescription: Needs a missing skill\nskills: [house-style, no-such-skill]\n---\nYou dream.\n');
    const listed = await s.api('/api/sub-agents', { method: 'POST', body: { project_dir: wd, load_user: false, load_builtin: false } });
    s.llm.push(finish('looked'));
    const body = { ...startBody(s, { agent: agent(s, ['terminal', 'task_tool_set']), initial_message: text('Look around.') }), workspace: { kind: 'LocalWorkspace', working_dir: wd } };
    const r = await s.api('/api/conversations', { method: 'POST', body });
    const end = await settled(s, r.body.id);
    const task = s.llm.requests[0]?.tools?.find((t) => t.function.name === 'task');
    const described = JSON.stringify(task?.function.description ?? '');
    return {
      listed: listed.status,
      agents: (listed.body.agents ?? []).map((a: any) => ({ name: a.name, skills: a.skills, level: a.level })),
      end,
      task_offered: task !== undefined,
      task_offers: ['stylist', 'dreamer'].filter((n) => described.includes(n)),
    };
  },
};

/**
 * Opens a socket, collects frames for a moment (or until it closes), and closes it. `close` is the
 * close code, or `http <status>` when the upgrade itself was refused.
 */
function socket(url: string): Promise<{ close: number | string | undefined; frames: any[] }> {
  return new Promise((resolve) => {
    const frames: any[] = [];
    const ws = new WebSocket(url);
    let closed: number | string | undefined;
    ws.on('unexpected-response', (_req, res) => {
      closed = `http ${res.statusCode}`;
      clearTimeout(timer);
      res.resume();
      done();
    });
    ws.on('message', (d) => frames.push(JSON.parse(d.toString())));
    ws.on('error', () => undefined);
    const done = () => resolve({ close: closed, frames });
    ws.on('close', (code) => {
      closed = code;
      clearTimeout(timer);
      done();
    });
    const timer = setTimeout(() => {
      ws.removeAllListeners('close');
      ws.terminate();
      done();
    }, 3000);
  });
}
