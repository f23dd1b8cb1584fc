// Differential flows for ACP agents: both servers run the same real ACP server (opencode, from
// hack/acp-agent.sh) whose model calls go to the side's scripted model (the agent's steps) and to a
// throwaway scripted server for opencode's session titles (left empty: a failed title is harmless,
// and the side's script stays exact). The opencode configuration is a conversation secret
// (OPENCODE_CONFIG_CONTENT): both servers hand secrets to the ACP server as environment variables.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { STDIO_SERVER } from '../../src/testing/mcp/server.ts';
import { until as untilFor } from '../../src/testing/until.ts';
import { opencodeBinary, opencodeConfig, opencodeConfigHome } from '../../src/testing/acp/opencode.ts';
import { codexAuth, startCredentialSource } from '../../src/testing/acp/credential-source.ts';
import { startScriptedLlm, type ScriptedLlm } from '../../src/testing/scripted-llm/server.ts';
import type { Flow, View } from './flows.ts';
import { startBody } from './flows.ts';
import { KEY, type Side } from './servers.ts';

const bin = opencodeBinary();
const SLOW = 120_000;
const until = <T>(what: string, fn: () => Promise<T | undefined | false>, ms = SLOW): Promise<T> => untilFor(what, fn, ms, 200);


const info = async (s: Side, id: string) => (await s.api(`/api/conversations/${id}`)).body;
const events = async (s: Side, id: string) => (await s.api(`/api/conversations/${id}/events/search?limit=100`)).body.items as any[];
const settled = (s: Side, id: string) => until('the run to end', async () => {
  const st = (await info(s, id)).execution_status;
  return ['finished', 'error', 'stuck', 'paused'].includes(st) ? st : undefined;
});
const isUpdate = (e: any) => e.kind === 'ConversationStateUpdateEvent';
const kinds = (evs: any[]) => evs.filter((e) => !isUpdate(e)).map((e) => (e.kind === 'MessageEvent' ? `MessageEvent:${e.source}` : e.kind));
const statuses = (evs: any[]) => evs.filter((e) => isUpdate(e) && e.key === 'execution_status').map((e) => e.value);
const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }], run: true });
const sortedKeys = (o: unknown) => Object.keys((o ?? {}) as object).sort();
const locs = (body: any) => (Array.isArray(body?.detail) ? body.detail.map((d: any) => JSON.stringify(d.loc)).sort() : body);

const secret = (value: string) => ({ kind: 'StaticSecret', value });

/** The ACP agent of a flow, and the secrets that configure opencode for the side's scripted model (and spare it an npm install: opencodeConfigHome). */
function acp(s: Side, titles: ScriptedLlm, extra: Record<string, unknown> = {}) {
  return {
    agent: { kind: 'ACPAgent', acp_server: 'opencode', acp_command: [bin, 'acp'], acp_isolate_data_dir: true, ...extra },
    secrets: { OPENCODE_CONFIG_CONTENT: secret(opencodeConfig(s.llm.url, titles.url)), OPENCODE_DISABLE_MODELS_FETCH: secret('1'), XDG_CONFIG_HOME: secret(opencodeConfigHome()) },
  };
}

/** Runs `fn` with a titles server of its own, closed after. */
async function withTitles(fn: (titles: ScriptedLlm) => Promise<View>): Promise<View> {
  const titles = await startScriptedLlm();
  try {
    return await fn(titles);
  } finally {
    await titles.close();
  }
}

/** An ACP tool-call event as a client compares it: what it is, not its ids or texts. */
const toolCall = (e: any) => ({ status: e.status, tool_kind: e.tool_kind, is_error: e.is_error, fields: sortedKeys(e) });

export const ACP_FLOWS: Record<string, Flow> = bin
  ? {
      /** A turn: message -> model -> tool call (opencode's bash) -> reply; the events, statuses and the conversation's ACP fields. */
      async acp_turn(s) {
        return withTitles(async (titles) => {
          // The agent server's own session key, where a subprocess could read it from: OpenHands' is in its
          // environment (OH_SESSION_API_KEYS_0); ours takes it as an option, so it is put there for this check.
          if (s.name === 'agentyard') process.env['OH_SESSION_API_KEYS_0'] ??= KEY;
          s.llm.push(
            { toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > acp-out.txt && cat acp-out.txt && echo "key=${OH_SESSION_API_KEYS_0:-unset}"', description: 'greet' } }] },
            { content: 'Wrote acp-out.txt.' },
          );
          const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles)) });
          const id = created.body.id;
          const before = await info(s, id);
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('write the greeting') });
          const end = await settled(s, id);
          const all = await events(s, id);
          const after = await info(s, id);
          const calls = all.filter((e) => e.kind === 'ACPToolCallEvent');
          const finish = all.find((e) => e.kind === 'ActionEvent');
          return {
            create: created.status,
            agent_kind: created.body.agent?.kind,
            agent_llm_model: created.body.agent?.llm?.model,
            model_before_run: before.current_model_id,
            end,
            kinds: kinds(all),
            statuses: statuses(all),
            update_keys: [...new Set(all.filter(isUpdate).map((e) => e.key))].sort(),
            agent_state_fields: sortedKeys(after.agent_state),
            stats_buckets: sortedKeys(after.stats?.usage_to_metrics),
            dynamic_context: Boolean(all.find((e) => e.kind === 'SystemPromptEvent')?.dynamic_context),
            tool_calls: calls.map(toolCall),
            same_call: new Set(calls.map((e) => e.tool_call_id)).size,
            finish: { tool_name: finish?.tool_name, action: finish?.action?.kind, message: finish?.action?.message },
            system_prompt_tools: all.find((e) => e.kind === 'SystemPromptEvent')?.tools,
            file: readFileSync(join(s.workDir, 'acp-out.txt'), 'utf8'),
            server_key_visible_to_acp: JSON.stringify(calls.at(-1)?.raw_output ?? '').includes(KEY),
            model_calls: s.llm.requests.length,
            current_model_id: after.current_model_id,
            offers_m2: (after.available_models ?? []).some((m: any) => m.model_id === 'scripted/m2'),
            model_fields: sortedKeys(after.available_models?.[0]),
            supports_runtime_model_switch: after.supports_runtime_model_switch,
          };
        });
      },

      /** switch_acp_model before the first run (kept), live after it, refused for a model the server does not have, and for an agent that is not ACP. */
      async acp_switch_model(s) {
        return withTitles(async (titles) => {
          s.llm.push({ content: 'on m2' }, { content: 'on m1' });
          const id = (await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles)) })).body.id;
          const sw = (model: string, cid = id) => s.api(`/api/conversations/${cid}/switch_acp_model`, { method: 'POST', body: { model } });
          const early = await sw('scripted/m2');
          const earlyModel = (await info(s, id)).current_model_id;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('first') });
          await settled(s, id);
          const live = await sw('scripted/m1');
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('second') });
          await until('the second turn', async () => (await events(s, id)).filter((e) => e.kind === 'ObservationEvent').length === 2);
          const unknown = await sw('nowhere/none');
          const empty = await s.api(`/api/conversations/${id}/switch_acp_model`, { method: 'POST', body: {} });
          const plain = (await s.api('/api/conversations', { method: 'POST', body: startBody(s) })).body.id;
          const notAcp = await sw('x', plain);
          return {
            early: early.status,
            early_model: earlyModel,
            live: live.status,
            models_called: s.llm.requests.map((r) => r.model),
            current_model_id: (await info(s, id)).current_model_id,
            unknown: unknown.status,
            empty: empty.status,
            empty_locs: locs(empty.body),
            not_acp: notAcp.status,
            not_acp_detail: notAcp.body.detail,
          };
        });
      },

      /** Pause while the ACP server waits for its model: the turn stops (ours: at once, the server told to cancel), the next message runs again. */
      async acp_pause(s) {
        return withTitles(async (titles) => {
          // The model holds its answer until the call is cancelled, or at most 8 s (OpenHands does not cancel it).
          const { held, answer } = heldAnswer();
          s.llm.push(answer, { content: 'back again' });
          const id = (await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles)) })).body.id;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('take your time') });
          await held;
          const pause = await s.api(`/api/conversations/${id}/pause`, { method: 'POST' });
          const paused = await settled(s, id);
          const atPause = await events(s, id);
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('go on') });
          // OpenHands may never run it (a difference to see, not a flow to fail): a bounded wait, then what is there.
          const second = await until('the second turn', async () => (await events(s, id)).some((e) => e.kind === 'ActionEvent' && e.action?.message === 'back again'), 20_000).catch(() => false);
          const end = (await info(s, id)).execution_status;
          const all = await events(s, id);
          return {
            pause: pause.status,
            paused,
            kinds_at_pause: kinds(atPause),
            second_turn: second,
            end,
            kinds: kinds(all),
            statuses: statuses(all),
            finishes: all.filter((e) => e.kind === 'ActionEvent').map((e) => e.action?.message),
          };
        });
      },

      /** acp_file_secrets with a custom spec: where the file lands, its mode and content, what the ACP server's environment and first prompt carry, and a delete. */
      async acp_file_secret(s) {
        return withTitles(async (titles) => {
          const CRED = '{"token":"parity-file-cred-5521"}';
          const spec = { secret_name: 'MY_CRED_FILE', filename: 'cred.json', env_var: 'MY_CRED_PATH', subdir: 'my-cli' };
          s.llm.push({ toolCalls: [{ name: 'bash', arguments: { command: 'echo "path=$MY_CRED_PATH mode=$(stat -c %a "$MY_CRED_PATH") sha=$(sha256sum < "$MY_CRED_PATH" | cut -c1-16) env=${MY_CRED_FILE:-unset}"', description: 'look' } }] }, { content: 'seen' });
          const base = acp(s, titles, { acp_file_secrets: [spec] });
          const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { ...base, secrets: { ...base.secrets, MY_CRED_FILE: secret(CRED) } }) });
          const id = created.body.id;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('look at the credential') });
          const end = await settled(s, id);
          const all = await events(s, id);
          const out = String(s.llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content ?? '');
          const path = /path=(\S+)/.exec(out)?.[1] ?? '';
          const exists = path !== '' && existsSync(path);
          const mode = exists ? (statSync(path).mode & 0o777).toString(8) : null;
          const deleted = await s.api(`/api/conversations/${id}`, { method: 'DELETE' });
          return {
            create: created.status,
            end,
            in_conversation_acp_dir: path.endsWith('/acp/my-cli/cred.json') && (path.includes(id) || path.includes(id.replaceAll('-', ''))),
            mode,
            seen_mode: /mode=(\d+)/.exec(out)?.[1],
            content_matches: out.includes(`sha=${createHash('sha256').update(CRED).digest('hex').slice(0, 16)}`),
            secret_as_env: !out.includes('env=unset'),
            announced: JSON.stringify(all.find((e) => e.kind === 'SystemPromptEvent')?.dynamic_context ?? '').includes('MY_CRED_FILE'),
            value_in_events: JSON.stringify(all).includes('parity-file-cred-5521'),
            deleted: deleted.status,
            file_after_delete: path !== '' && existsSync(path),
          };
        });
      },

      /** The conversation's MCP servers reach the ACP session: opencode offers a stdio server's tool and calls it; a disabled server is not offered. */
      async acp_mcp(s) {
        return withTitles(async (titles) => {
          const offered: string[] = [];
          s.llm.push((req) => {
            const names = req.tools?.map((t) => t.function.name) ?? [];
            offered.push(...names.filter((n) => n.startsWith('testmcp') || n.startsWith('off')));
            const echo = names.find((n) => n.startsWith('testmcp') && n.endsWith('echo'));
            return echo ? { toolCalls: [{ name: echo, arguments: { text: 'through-acp' } }] } : { content: 'no mcp tool' };
          }, { content: 'echoed' });
          // 1.58's form: the server map itself.
          const mcp_config = { testmcp: { command: process.execPath, args: [STDIO_SERVER] }, off: { command: process.execPath, args: [STDIO_SERVER], enabled: false } };
          const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles, { mcp_config })) });
          if (created.status !== 201) return { create: created.status, detail: created.body };
          const id = created.body.id as string;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('echo something') });
          const end = await settled(s, id).catch(() => 'did not end');
          const all = await events(s, id);
          return {
            end,
            offered: offered.map((n) => n.replace(/^(testmcp|off)\W*/, '$1:')).sort(),
            tool_answer: String(s.llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content ?? '').includes('echo: through-acp'),
            kinds: kinds(all),
            tool_calls: all.filter((e) => e.kind === 'ACPToolCallEvent').map((e) => ({ status: e.status, is_error: e.is_error })),
          };
        });
      },

      /** Credential bindings (Codex auth.json from a versioned HTTP source) and prepare-for-sandbox-pause. */
      async acp_credential_binding(s) {
        return withTitles(async (titles) => {
          const auth = codexAuth;
          const source = await startCredentialSource(auth('refresh-rt-one'), 'Bearer k1');
          const url = source.url;
          try {
            // An ACP server nobody recognises by name: every built-in credential file applies to it.
            const link = join(s.workDir, `acp-cli-${Date.now()}`);
            symlinkSync(bin!, link);
            s.llm.push({ toolCalls: [{ name: 'bash', arguments: { command: 'echo "home=$CODEX_HOME mode=$(stat -c %a "$CODEX_HOME/auth.json")"; sed -i s/rt-one/rt-two/g "$CODEX_HOME/auth.json"', description: 'refresh' } }] }, { content: 'refreshed' });
            const { secrets } = acp(s, titles);
            const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, { agent: { kind: 'ACPAgent', acp_server: 'custom', acp_command: [link, 'acp'], acp_isolate_data_dir: true }, secrets }) });
            if (created.status !== 201) return { create: created.status, detail: created.body };
            const id = created.body.id as string;
            const bind = (name: string, body: unknown) => s.api(`/api/conversations/${id}/credential-bindings/${name}`, { method: 'PUT', body });
            const other = await bind('OTHER_SECRET', { url });
            const empty = await bind('CODEX_AUTH_JSON', {});
            const wrong = await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer wrong' } });
            const ok = await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer k1' } });
            await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('refresh the token') });
            const end = await settled(s, id);
            const out = String(s.llm.requests[1]?.messages.find((m) => m.role === 'tool')?.content ?? '');
            const home = /home=(\S+)/.exec(out)?.[1] ?? '';
            const written_back = await until('the refresh to reach the source', async () => source.value === auth('refresh-rt-two'), 10_000).catch(() => false);
            source.key = 'Bearer k2';
            const rotated = await bind('CODEX_AUTH_JSON', { url, headers: { Authorization: 'Bearer k2' } });
            const elsewhere = await bind('CODEX_AUTH_JSON', { url: `${url}-other`, headers: { Authorization: 'Bearer k2' } });
            if (home) writeFileSync(join(home, 'auth.json'), auth('refresh-rt-three'));
            const all = JSON.stringify(await events(s, id));
            const prepared = await s.api('/api/conversations/prepare-for-sandbox-pause', { method: 'POST' });
            const afterPause = await s.api(`/api/conversations/${id}`);
            return {
              other: other.status,
              empty: empty.status,
              empty_locs: locs(empty.body),
              wrong: wrong.status,
              ok: ok.status,
              end,
              mode: /mode=(\d+)/.exec(out)?.[1],
              home_in_conversation_dir: home.includes(id) || home.includes(id.replaceAll('-', '')),
              written_back,
              puts: source.seen.filter((r) => r.method === 'PUT').slice(0, 1).map((r) => ({ auth: r.auth, expected_version: r.body?.expected_version, refreshed: r.body?.value === auth('refresh-rt-two') })),
              rotated: rotated.status,
              elsewhere: elsewhere.status,
              prepared: prepared.status,
              info_after_pause: afterPause.status,
              flushed: source.value === auth('refresh-rt-three'),
              last_request_auth: source.seen.at(-1)?.auth,
              home_after_pause: home !== '' && existsSync(home),
              tokens_in_events: ['refresh-rt-one', 'refresh-rt-two', 'Bearer k'].filter((t) => all.includes(t)),
            };
          } finally {
            source.close();
          }
        });
      },

      /** POST /api/acp/models: a working server, one that cannot start, and `custom` without a command. */
      /**
       * The ACP session outlives the ACP server: after prepare-for-sandbox-pause stops it, the next turn's
       * server loads the session (session/load) and the model sees the first turn; agent_state names the
       * same session; the first-turn suffix (the secrets' names) is not sent again.
       */
      async acp_resume(s) {
        return withTitles(async (titles) => {
          s.llm.push({ content: 'Noted: PAPAYA.' }, { content: 'PAPAYA' });
          const created = await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles)) });
          const id = created.body.id;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('the word is PAPAYA') });
          await until('the first turn', async () => (await info(s, id)).execution_status === 'finished');
          const first = (await info(s, id)).agent_state;
          const prepared = await s.api('/api/conversations/prepare-for-sandbox-pause', { method: 'POST' });
          const between = await info(s, id);
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('what is the word?') });
          await until('the second turn', async () => (await events(s, id)).filter((e) => e.kind === 'ObservationEvent').length === 2 || ((await info(s, id)).execution_status === 'error' && 'error'));
          await settled(s, id);
          const all = await events(s, id);
          const after = await info(s, id);
          const second = JSON.stringify(s.llm.requests[1]?.messages ?? null);
          return {
            prepared: prepared.status,
            // What a client reads while no ACP server runs: the recorded state.
            between_same_session: between.agent_state?.acp_session_id === first.acp_session_id,
            end: after.execution_status,
            kinds: kinds(all),
            statuses: statuses(all),
            same_session: after.agent_state?.acp_session_id === first.acp_session_id,
            model_saw: ['the word is PAPAYA', 'Noted: PAPAYA.', 'what is the word?'].map((t) => second.includes(t)),
            suffix_sent: second.split('<CUSTOM_SECRETS>').length - 1,
            model_calls: s.llm.requests.length,
            suffix_installed: after.agent_state?.acp_suffix_installed ?? null,
          };
        });
      },

      async acp_models(s) {
        return withTitles(async (titles) => {
          const { secrets } = acp(s, titles);
          const ask = (agent_settings: Record<string, unknown>) => s.api('/api/acp/models', { method: 'POST', body: { agent_settings, secrets } });
          const ok = await ask({ acp_server: 'opencode', acp_command: [bin, 'acp'], acp_isolate_data_dir: true });
          const broken = await ask({ acp_server: 'custom', acp_command: [join(s.workDir, 'no-such-acp')] });
          const custom = await ask({ acp_server: 'custom' });
          return {
            ok: ok.status,
            ok_fields: sortedKeys(ok.body),
            agent: [ok.body.agent_name, ok.body.agent_version],
            current_model_id: ok.body.current_model_id,
            offers_m2: (ok.body.available_models ?? []).some((m: any) => m.model_id === 'scripted/m2'),
            supports_runtime_model_switch: ok.body.supports_runtime_model_switch,
            error: ok.body.error,
            broken: broken.status,
            broken_code: broken.body.error?.code,
            broken_models: broken.body.available_models,
            custom: custom.status,
            model_calls: s.llm.requests.length,
          };
        });
      },

      /** ACP agent profiles: save, list, preview, and a launch from one. */
      async acp_profiles(s) {
        return withTitles(async (titles) => {
          const A = '/api/agent-profiles';
          const saved = await s.api(`${A}/parity-acp`, { method: 'POST', body: { agent_kind: 'acp', acp_server: 'opencode', acp_model: 'scripted/m2', acp_command: `'${bin}' acp` } });
          const stored = (await s.api(`${A}/parity-acp`)).body.profile;
          const listed = (await s.api(A)).body.profiles.find((p: any) => p.name === 'parity-acp');
          const preview = (await s.api(`${A}/parity-acp/materialize`, { method: 'POST' })).body;
          const mongrel = await s.api(`${A}/parity-acp2`, { method: 'POST', body: { agent_kind: 'acp', llm_profile_ref: 'x' } });
          const launched = await s.api('/api/conversations', { method: 'POST', body: { ...startBody(s), agent: undefined, agent_profile_id: stored?.id, secrets: acp(s, titles).secrets } });
          await s.api(`${A}/parity-acp`, { method: 'DELETE' });
          return {
            saved: saved.status,
            stored_fields: sortedKeys(stored),
            stored: { acp_server: stored?.acp_server, acp_model: stored?.acp_model, acp_prompt_timeout: stored?.acp_prompt_timeout, acp_startup_timeout: stored?.acp_startup_timeout, acp_args: stored?.acp_args },
            listed: { agent_kind: listed?.agent_kind, llm_profile_ref: listed?.llm_profile_ref },
            preview: { valid: preview.valid, errors: preview.errors, agent_kind: preview.agent_kind, key: preview.acp_api_key_secret_name, url: preview.acp_base_url_secret_name, files: preview.acp_file_secret_names },
            mongrel: mongrel.status,
            mongrel_locs: locs(mongrel.body),
            launched: launched.status,
            launched_agent: { kind: launched.body.agent?.kind, acp_server: launched.body.agent?.acp_server, acp_model: launched.body.agent?.acp_model, acp_command: launched.body.agent?.acp_command },
          };
        });
      },

      /**
       * A turn cut off by prepare-for-sandbox-pause while the ACP server waits for its model (the
       * conversation's server stops mid-turn, as at an agent-server restart), then a new message:
       * which messages each later prompt carries (the model sees each prompt as a new user turn),
       * the end state and the events.
       */
      async acp_cut_off_turn(s) {
        return withTitles(async (titles) => {
          // The first model call is held until its request goes away (the ACP server stopped), or 8 s.
          const { held, answer } = heldAnswer();
          s.llm.push(answer, { content: 'answer two' }, { content: 'answer three' });
          const id = (await s.api('/api/conversations', { method: 'POST', body: startBody(s, acp(s, titles)) })).body.id;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('first word APPLE') });
          await held;
          const prepared = await s.api('/api/conversations/prepare-for-sandbox-pause', { method: 'POST' });
          const cut = (await info(s, id)).execution_status;
          await s.api(`/api/conversations/${id}/events`, { method: 'POST', body: text('second word BANANA') });
          // Both turns may take a prompt each: a bounded wait for the script to be used up, then what is there.
          await until('the turns after the cut', async () => s.llm.remaining() === 0 && (await info(s, id)).execution_status === 'finished', 30_000).catch(() => false);
          const end = await settled(s, id);
          const all = await events(s, id);
          // What each model call after the cut-off one was given as its newest user turn.
          const newest = (req: { messages: { role: string; content?: unknown }[] }) => {
            const lastAssistant = req.messages.map((m) => m.role).lastIndexOf('assistant');
            const turn = JSON.stringify(req.messages.slice(lastAssistant + 1).filter((m) => m.role === 'user'));
            return ['APPLE', 'BANANA'].filter((w) => turn.includes(w));
          };
          return {
            prepared: prepared.status,
            cut,
            end,
            prompts: s.llm.requests.slice(1).map(newest),
            kinds: kinds(all),
            statuses: statuses(all),
            finishes: all.filter((e) => e.kind === 'ActionEvent').map((e) => e.action?.message),
          };
        });
      },
    }
  : {};

/**
 * A scripted answer that holds the model call until its request goes away (cancelled, or the ACP
 * server stopped) or 8 s pass, then answers 'late answer'; `held` resolves once the call arrived.
 */
function heldAnswer(): { held: Promise<void>; answer: (req: { signal: AbortSignal }) => Promise<{ content: string }> } {
  let asked!: () => void;
  const held = new Promise<void>((r) => (asked = r));
  const answer = async (req: { signal: AbortSignal }) => {
    asked();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 8000);
      req.signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
    return { content: 'late answer' };
  };
  return { held, answer };
}
