// The critic side by side (OpenHands' APIBasedCritic, `agent.critic`): both servers score the same
// scripted run through a classification service, the scripted model server's vLLM-style
// `POST .../classify` (each side's own, recording every request and answering scripted
// probabilities). Compared: what a client sees (the critic_result on each event, the follow-up
// messages of iterative refinement, the execution status, the events) and what the service received:
// how many calls, in which order, with which credential, and the trace each one rendered (which
// turns, roles and texts, which tools).
//
// 1.58 renders the trace with the Qwen3 tokenizer's chat template, which it downloads from the
// Hugging Face Hub unless ~/.cache/chat_templates has it: the real server's HOME is seeded here with
// the Qwen3 tokenizer_config.json that hack/qwen3-chat-template.sh fetched (make test does). That is
// the Qwen3 family's template, not byte for byte the Qwen3-4B-Instruct-2507 one 1.58 names, so the
// renders are compared as turns, not as bytes (an empty <think> block the hybrid template gives a
// trailing assistant turn is the template's, not a finding).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { until } from '../../src/testing/until.ts';
import { CRITIC_LABELS } from '../../src/agent/critic/critic.ts';
import type { ScriptStep } from '../../src/testing/scripted-llm/server.ts';
import type { Side } from './servers.ts';
import { startBody, type View } from './flows.ts';

/** The tokenizer 1.58's critic renders with (CriticClient.tokenizer_name's default). */
const TOKENIZER = 'Qwen/Qwen3-4B-Instruct-2507';
const TEMPLATE_VERSION = '3.7.2';

/** The Qwen3 tokenizer_config.json hack/qwen3-chat-template.sh caches. */
export function qwen3TemplateFile(): string {
  const cache = process.env['AGENTYARD_CACHE'] ?? join(homedir(), '.cache/agentyard');
  return join(cache, 'chat-templates', `qwen3-${TEMPLATE_VERSION}`, 'tokenizer_config.json');
}

/**
 * 1.58's template cache under the real server's HOME (chat_template.py's CACHE_DIR, the file named by
 * the MD5 of the tokenizer name). Ours renders without it: only the OpenHands side is seeded, and a
 * missing template fails that side alone, so the flow shows a difference instead of passing.
 */
function seedTemplate(s: Side): void {
  if (s.name !== 'openhands') return;
  const file = qwen3TemplateFile();
  if (!existsSync(file)) throw new Error(`no Qwen3 chat template at ${file}: run hack/qwen3-chat-template.sh (make test does)`);
  const dir = join(s.home, '.cache', 'chat_templates');
  mkdirSync(dir, { recursive: true });
  copyFileSync(file, join(dir, `${createHash('md5').update(TOKENIZER).digest('hex')}_tokenizer_config.json`));
}

const CRITIC_KEY = 'sk-critic-parity';
const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: t }], run: true });
const finish = (message: string): ScriptStep => ({ toolCalls: [{ name: 'finish', arguments: { message } }] });
/** Probabilities in the critic's label order: `success`, and any label given, the rest 0.05. */
const probs = (success: number, more: Record<string, number> = {}) => CRITIC_LABELS.map((l) => (l === 'success' ? success : (more[l] ?? 0.05)));

async function events(s: Side, id: string): Promise<any[]> {
  const r = await s.api(`/api/conversations/${id}/events/search?limit=100`);
  if (r.status !== 200) throw new Error(`events/search: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.items;
}
const status = async (s: Side, id: string): Promise<string> => (await s.api(`/api/conversations/${id}`)).body.execution_status;
const settled = (s: Side, id: string) => until('the run to end', async () => {
  const st = await status(s, id);
  return ['finished', 'error', 'stuck', 'paused', 'waiting_for_confirmation'].includes(st) ? st : undefined;
});

/** The critic service's URL on a side: its scripted model server, under /vllm as All Hands' proxy serves it. */
const criticUrl = (s: Side) => s.llm.url.replace(/\/v1$/, '/vllm');

function critic(s: Side, extra: Record<string, unknown>): Record<string, unknown> {
  return { kind: 'APIBasedCritic', server_url: criticUrl(s), api_key: CRITIC_KEY, model_name: 'critic', ...extra };
}

async function start(s: Side, criticCfg: Record<string, unknown> | undefined, first?: string): Promise<{ status: number; id: string; body: any }> {
  seedTemplate(s);
  const base = startBody(s, first === undefined ? {} : { initial_message: text(first) });
  const body = { ...base, agent: { ...(base['agent'] as object), ...(criticCfg ? { critic: criticCfg } : {}) } };
  const r = await s.api('/api/conversations', { method: 'POST', body });
  return { status: r.status, id: r.body?.id, body: r.body };
}

/** An event as a client reads it: kind (with the source of a message), and its critic result with the scored event ids as positions. */
function scored(evs: any[]): unknown[] {
  const own = evs.filter((e) => e.kind !== 'ConversationStateUpdateEvent');
  const at = new Map(own.map((e, i) => [e.id, i]));
  return own.map((e) => {
    const kind = e.kind === 'MessageEvent' ? `MessageEvent:${e.source}` : e.kind === 'ActionEvent' ? `ActionEvent:${e.tool_name}` : e.kind;
    const r = e.critic_result;
    if (!r) return kind;
    const { event_ids, ...meta } = r.metadata ?? {};
    return { kind, score: r.score, message: r.message, metadata_fields: Object.keys(r.metadata ?? {}).sort(), event_ids: (event_ids ?? []).map((id: string) => at.get(id) ?? (id === e.id ? 'self' : 'unknown')), ...meta };
  });
}

/** The user messages' texts (the follow-ups of refinement among them). */
const userTexts = (evs: any[]) => evs.filter((e) => e.kind === 'MessageEvent' && e.source === 'user').map((e) => e.llm_message.content.map((c: any) => c.text).join(''));

/**
 * A rendered trace as turns: the system turn's tool names (its prompt differs by nature), then each
 * turn's role and text; tool results (<tool_response> blocks in a user turn) as `tool` entries. An
 * empty <think> block the template gives an assistant turn is dropped (the template's, see above).
 */
export function turns(input: string): { tools: string[]; system: boolean; turns: [string, string][] } {
  const out = { tools: [] as string[], system: false, turns: [] as [string, string][] };
  for (const raw of input.split('<|im_start|>').slice(1)) {
    const body = raw.replace(/<\|im_end\|>\n?$/, '');
    const nl = body.indexOf('\n');
    const role = nl < 0 ? body : body.slice(0, nl);
    let content = nl < 0 ? '' : body.slice(nl + 1);
    if (role === 'system' && out.turns.length === 0 && !out.system) {
      out.system = true;
      const tools = /<tools>\n([\s\S]*?)\n<\/tools>/.exec(content)?.[1];
      if (tools) out.tools = tools.split('\n').map((l) => (JSON.parse(l) as { function: { name: string } }).function.name);
      continue;
    }
    // A tool result's own lines: the bracketed notes the terminal adds (exit code, working
    // directory, interpreter) differ between the servers' terminals, not in what the critic reads.
    if (role === 'assistant') content = content.replace(/^<think>\n[\s\S]*?\n<\/think>\n\n/, '');
    if (role === 'user' && content.startsWith('\n<tool_response>') || content.startsWith('<tool_response>')) {
      for (const m of content.matchAll(/<tool_response>\n([\s\S]*?)\n<\/tool_response>/g)) out.turns.push(['tool', m[1]!.split('\n').filter((l) => !/^\[.*\]$/.test(l)).join('\n')]);
      continue;
    }
    out.turns.push([role, content]);
  }
  return out;
}

/** What the critic service received: each call's credential, model and rendered turns (PARITY_CRITIC_RAW=1: the rendered text too, while working on the suite). */
function calls(s: Side, from = 0): unknown[] {
  return s.llm.classifications.slice(from).map((c) => ({ authorization: c.headers['authorization'], model: c.model, ...turns(c.input), raw: process.env['PARITY_CRITIC_RAW'] ? c.input : undefined }));
}

export const CRITIC_FLOWS: Record<string, (s: Side) => Promise<View>> = {
  /**
   * finish_and_message with iterative refinement (threshold 0.6, two iterations): a terminal call and
   * a finish scored 0.3 (a follow-up), a finish scored high but with a likely agent issue (another),
   * a finish scored 0.2 with no iteration left (finished). Then a plain answer, no tool call: scored
   * as a message.
   */
  async critic_refinement(s) {
    s.llm.push({ toolCalls: [{ name: 'terminal', arguments: { command: 'echo critic-$((40+2))' } }] }, finish('Printed it.'), finish('Checked it.'), finish('Sure it is.'));
    s.llm.pushClassification(probs(0.3), probs(0.9, { loop_behavior: 0.8, correction: 0.4 }), probs(0.2, { sentiment_negative: 0.7 }));
    const r = await start(s, critic(s, { mode: 'finish_and_message', iterative_refinement: { success_threshold: 0.6, max_iterations: 2 } }), 'Print critic-42.');
    const end = await settled(s, r.id);
    const evs = await events(s, r.id);
    const firstCalls = s.llm.classifications.length;
    s.llm.push({ content: 'Hi there.' });
    s.llm.pushClassification(probs(0.7));
    await s.api(`/api/conversations/${r.id}/events`, { method: 'POST', body: text('Say hi.') });
    await until('the second run to start', async () => (await events(s, r.id)).length > evs.length);
    const end2 = await settled(s, r.id);
    const evs2 = await events(s, r.id);
    const info = (await s.api(`/api/conversations/${r.id}`)).body;
    return {
      create: r.status,
      // The service's URL is each side's own.
      critic_shown: info.agent?.critic ? { ...info.agent.critic, server_url: info.agent.critic.server_url === criticUrl(s) } : null,
      // The state updates refinement makes: agent_state's iteration count, the last user message (which
      // kind it names). Others are left out: 1.58 updates `agent` at a start when earlier flows left it
      // LLM profiles, which is no concern of the critic.
      updates: evs2.filter((e) => e.kind === 'ConversationStateUpdateEvent' && (e.key === 'agent_state' || e.key === 'last_user_message_id')).map((e) => [e.key, e.key === 'last_user_message_id' ? scored(evs2.filter((m) => m.id === e.value))[0] : e.value]),
      end,
      events: scored(evs),
      followups: userTexts(evs).slice(1),
      classify: calls(s).slice(0, firstCalls),
      end2,
      events2: scored(evs2).slice(scored(evs).length),
      classify2: calls(s, firstCalls),
      agent_state: info.agent_state,
      model_calls: s.llm.requests.length,
      unanswered: s.llm.remaining(),
    };
  },

  /**
   * all_actions: every action scored as it is made (two parallel calls, then a finish), the service
   * failing once with 500 and once with 401 on the way; no refinement configured.
   */
  async critic_all_actions(s) {
    s.llm.push({ toolCalls: [{ name: 'think', arguments: { thought: 'plan it' } }, { name: 'terminal', arguments: { command: 'echo all-actions' } }] }, { toolCalls: [{ name: 'terminal', arguments: { command: 'echo again' } }] }, finish('Done.'));
    s.llm.pushClassification({ status: 500 }, probs(0.61), { status: 401 }, probs(0.62), probs(0.9));
    const r = await start(s, critic(s, { mode: 'all_actions' }), 'Plan, then print all-actions.');
    const end = await settled(s, r.id);
    const evs = await events(s, r.id);
    return {
      create: r.status,
      end,
      events: scored(evs),
      classify: calls(s),
      unanswered: s.llm.remaining(),
    };
  },

  /** Which critic settings a start takes: without a key, with an unknown mode, without a service URL. */
  async critic_settings(s) {
    const r = async (c: Record<string, unknown>) => {
      const out = await start(s, c);
      return out.status === 422 ? { status: 422, locs: (out.body?.detail ?? []).map((d: any) => JSON.stringify(d.loc)).sort() } : { status: out.status };
    };
    return {
      no_key: await r({ kind: 'APIBasedCritic', server_url: criticUrl(s) }),
      bad_mode: await r(critic(s, { mode: 'sometimes' })),
      bad_threshold: await r(critic(s, { iterative_refinement: { success_threshold: 2 } })),
    };
  },
};
