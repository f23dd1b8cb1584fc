// The critic (OpenHands' APIBasedCritic, `agent.critic`): a classification model served by vLLM
// (`POST {server_url}/classify`) scores the conversation when the agent finishes or answers without
// a tool call (mode finish_and_message) or after every action (all_actions). The score is the
// probability of the `success` label; the result is recorded on the event (`critic_result`). With iterative
// refinement, a finish the critic scores below the threshold (or with a likely agent issue) becomes a
// follow-up user message and the run goes on, up to `max_iterations` times.
// The critic reads the conversation as its model was trained: messages flattened to role and text,
// rendered in the ChatML form of the Qwen3 tokenizer (OpenHands fetches that template from the
// Hugging Face Hub at first use; it is written out here, so no download is needed; e2e/parity's
// critic flows compare what it renders with 1.58's own rendering, turn by turn).
import type { CriticResult } from '../../api/events/index.ts';
import type { ChatMessage, ChatTool } from '../llm/client.ts';

/** Thrown for a critic configuration the agent cannot use (ends the run with a ConversationErrorEvent); `loc`: the field, under agent.critic. */
export class CriticConfigError extends Error {
  readonly loc: string[];
  constructor(message: string, loc: string[] = []) {
    super(message);
    this.loc = loc;
  }
}

export interface CriticConfig {
  serverUrl: string;
  /** The service's key (`agent.critic.api_key`); without one the critic authenticates with the agent LLM's key. */
  apiKey?: string;
  modelName: string;
  mode: 'finish_and_message' | 'all_actions';
  refinement?: { threshold: number; maxIterations: number };
  /** Probability of an agent-issue label that asks for refinement too (OpenHands' issue_threshold). */
  issueThreshold: number;
  timeoutMs: number;
}

/** The labels the critic model predicts, in the order of its probabilities (with `success` first). */
const SENTIMENT = ['sentiment_positive', 'sentiment_neutral', 'sentiment_negative'];
const AGENT_ISSUES = ['misunderstood_intention', 'did_not_follow_instruction', 'insufficient_analysis', 'insufficient_clarification', 'improper_tool_use_or_setup', 'loop_behavior', 'insufficient_testing', 'insufficient_debugging', 'incomplete_implementation', 'file_management_errors', 'scope_creep', 'risky_actions_or_permission', 'other_agent_issue'];
const INFRA = ['infrastructure_external_issue', 'infrastructure_agent_caused_issue'];
const USER_FOLLOWUP = ['clarification_or_restatement', 'correction', 'direction_change', 'vcs_update_requests', 'progress_or_scope_concern', 'frustration_or_complaint', 'removal_or_reversion_request', 'other_user_issue'];
export const CRITIC_LABELS = ['success', ...SENTIMENT, ...AGENT_ISSUES, ...INFRA, ...USER_FOLLOWUP];

/**
 * `agent.critic` of the start request: undefined for none. `api_key` is the service's key (1.58
 * requires one); without it the critic authenticates with the agent LLM's key, as 1.58's settings
 * build the critic (critic_api_key or the LLM's key), which is what a profile launch gives here. There
 * is no default service (OpenHands' is All Hands' proxy, which would receive that key).
 */
export function criticConfig(raw: Record<string, unknown> | null | undefined): CriticConfig | undefined {
  if (raw == null) return undefined;
  if (raw['kind'] !== undefined && raw['kind'] !== 'APIBasedCritic') throw new CriticConfigError(`Critic kind ${JSON.stringify(raw['kind'])} is not supported; use APIBasedCritic`, ['kind']);
  const key = raw['api_key'];
  if (key != null && typeof key !== 'string') throw new CriticConfigError('agent.critic.api_key must be a string', ['api_key']);
  const url = raw['server_url'];
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new CriticConfigError('agent.critic.server_url must be the http(s) URL of the critic service (there is no default one)', ['server_url']);
  const mode = raw['mode'] ?? 'finish_and_message';
  if (mode !== 'finish_and_message' && mode !== 'all_actions') throw new CriticConfigError('agent.critic.mode must be finish_and_message or all_actions', ['mode']);
  const ir = raw['iterative_refinement'] as Record<string, unknown> | null | undefined;
  const threshold = ir?.['success_threshold'] ?? 0.6;
  const max = ir?.['max_iterations'] ?? 3;
  if (ir && (typeof threshold !== 'number' || threshold < 0 || threshold > 1)) throw new CriticConfigError('agent.critic.iterative_refinement.success_threshold must be a number in [0, 1]', ['iterative_refinement', 'success_threshold']);
  if (ir && (typeof max !== 'number' || !Number.isInteger(max) || max < 1)) throw new CriticConfigError('agent.critic.iterative_refinement.max_iterations must be a positive integer', ['iterative_refinement', 'max_iterations']);
  const timeout = raw['timeout_seconds'] ?? 300;
  return {
    serverUrl: url.replace(/\/+$/, ''),
    ...(typeof key === 'string' && key.trim() !== '' ? { apiKey: key } : {}),
    modelName: typeof raw['model_name'] === 'string' ? raw['model_name'] : 'critic',
    mode,
    ...(ir ? { refinement: { threshold: threshold as number, maxIterations: max as number } } : {}),
    issueThreshold: typeof raw['issue_threshold'] === 'number' ? raw['issue_threshold'] : 0.75,
    timeoutMs: typeof timeout === 'number' && timeout > 0 ? timeout * 1000 : 300_000,
  };
}

/**
 * `agent.critic` as 1.58 shows it in ConversationInfo: the APIBasedCritic with every field, defaults
 * filled in, in its order; the key always null (1.58 shows null; here it is sealed apart).
 */
export function criticShown(raw: Record<string, unknown>): Record<string, unknown> {
  const { kind: _kind, api_key: _key, ...given } = raw;
  const shown: Record<string, unknown> = {
    server_url: null,
    api_key: null,
    model_name: 'critic',
    tokenizer_name: 'Qwen/Qwen3-4B-Instruct-2507',
    pass_tools_definitions: true,
    timeout_seconds: 300,
    has_success_label: true,
    sentiment_labels: SENTIMENT,
    agent_issue_labels: AGENT_ISSUES,
    infra_labels: INFRA,
    user_followup_labels: USER_FOLLOWUP,
    sentiment_map: { Positive: 'sentiment_positive', Neutral: 'sentiment_neutral', Negative: 'sentiment_negative' },
    mode: 'finish_and_message',
    iterative_refinement: null,
    issue_threshold: 0.75,
    ...given,
    ...(given['iterative_refinement'] ? { iterative_refinement: { success_threshold: 0.6, max_iterations: 3, ...(given['iterative_refinement'] as object) } } : {}),
    kind: 'APIBasedCritic',
  };
  // Never the key, whatever the stored request holds (assigned: the field keeps its place).
  shown['api_key'] = null;
  return shown;
}

/** JSON as Python's json.dumps writes it (", " and ": "), which is what the template's tojson gives. */
function pyJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(pyJson).join(', ')}]`;
  if (v && typeof v === 'object') return `{${Object.entries(v).filter(([, x]) => x !== undefined).map(([k, x]) => `${JSON.stringify(k)}: ${pyJson(x)}`).join(', ')}}`;
  return JSON.stringify(v) ?? 'null';
}

/** Role and text only (tool calls dropped), as the critic client flattens messages. */
function flatten(messages: readonly ChatMessage[]): { role: string; content: string }[] {
  return messages.map((m) => {
    const c = (m as { content?: unknown }).content;
    const text = Array.isArray(c) ? c.filter((p) => p && (p as { type?: unknown }).type === 'text').map((p) => String((p as { text?: unknown }).text ?? '')).join('\n') : typeof c === 'string' ? c : c == null ? '' : String(c);
    return { role: m.role, content: text };
  });
}

/** The conversation in the Qwen3 ChatML form: tools in the system turn, tool results as <tool_response> in a user turn. */
export function renderCriticInput(messages: readonly ChatMessage[], tools: readonly ChatTool[]): string {
  const msgs = flatten(messages);
  let out = '';
  const system = msgs[0]?.role === 'system' ? msgs[0].content : undefined;
  if (tools.length) {
    out += '<|im_start|>system\n' + (system !== undefined ? `${system}\n\n` : '');
    out += '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>';
    for (const t of tools) out += '\n' + pyJson(t);
    out += '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
  } else if (system !== undefined) {
    out += `<|im_start|>system\n${system}<|im_end|>\n`;
  }
  msgs.forEach((m, i) => {
    if (i === 0 && system !== undefined) return;
    if (m.role !== 'tool') {
      out += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
      return;
    }
    if (msgs[i - 1]?.role !== 'tool') out += '<|im_start|>user';
    out += `\n<tool_response>\n${m.content}\n</tool_response>`;
    if (msgs[i + 1]?.role !== 'tool') out += '<|im_end|>\n';
  });
  return out;
}

interface Feature {
  name: string;
  display_name: string;
  probability: number;
}

const title = (name: string) => name.split('_').map((w) => (w ? w[0]!.toUpperCase() + w.slice(1) : w)).join(' ');

/** The probabilities grouped for display (OpenHands' taxonomy): sentiment (softmax), then issues and patterns over 0.2, likeliest first. */
export function categorize(probs: Record<string, number>): Record<string, unknown> {
  const sentiment = Object.fromEntries(SENTIMENT.filter((l) => l in probs).map((l) => [l.slice('sentiment_'.length), probs[l]!]));
  const exps = Object.entries(sentiment).map(([k, v]) => [k, Math.exp(v)] as const);
  const total = exps.reduce((a, [, v]) => a + v, 0);
  const all = Object.fromEntries(exps.map(([k, v]) => [k, v / total]));
  const top = Object.entries(all).sort((a, b) => b[1] - a[1])[0];
  const groups: Record<string, Feature[]> = { agent_behavioral_issues: [], user_followup_patterns: [], infrastructure_issues: [], other: [] };
  for (const [name, p] of Object.entries(probs)) {
    if (name === 'success' || name.startsWith('sentiment_') || p < 0.2) continue;
    const group = AGENT_ISSUES.includes(name) ? 'agent_behavioral_issues' : USER_FOLLOWUP.includes(name) ? 'user_followup_patterns' : INFRA.includes(name) ? 'infrastructure_issues' : 'other';
    groups[group]!.push({ name, display_name: title(name), probability: p });
  }
  for (const g of Object.values(groups)) g.sort((a, b) => b.probability - a.probability);
  return { sentiment: top ? { predicted: title(top[0]), probability: top[1], all } : null, ...groups };
}

/** A float as Python prints it (1.0, not 1). */
const pyFloat = (n: number) => (Number.isInteger(n) ? n.toFixed(1) : String(n));

/** The waits before the second and third attempt when the service answers 500 (1.58: tenacity, exponential from 1 s, three attempts). */
export const RETRY_WAITS_MS = [1000, 2000];

const wait = (ms: number, signal: AbortSignal) =>
  new Promise<void>((ok, fail) => {
    const t = setTimeout(ok, ms);
    signal.addEventListener('abort', () => (clearTimeout(t), fail(signal.reason)), { once: true });
  });

/**
 * One evaluation: the rendered conversation to the classification service, its probabilities as a
 * CriticResult. A 500 is tried again (twice, as 1.58); any other failure is final.
 */
export async function evaluate(cfg: CriticConfig, apiKey: string, messages: readonly ChatMessage[], tools: readonly ChatTool[], eventIds: readonly string[], signal: AbortSignal, waits: readonly number[] = RETRY_WAITS_MS): Promise<CriticResult> {
  const input = renderCriticInput(messages, tools);
  let res: Response;
  for (let attempt = 0; ; attempt++) {
    res = await fetch(`${cfg.serverUrl}/classify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ model: cfg.modelName, input }),
      signal: AbortSignal.any([signal, AbortSignal.timeout(cfg.timeoutMs)]),
    });
    if (res.status !== 500 || attempt >= waits.length) break;
    await res.body?.cancel();
    await wait(waits[attempt]!, signal);
  }
  if (!res.ok) throw new Error(`the critic service answered ${res.status}`);
  const body = (await res.json()) as { data?: { probs?: unknown; num_classes?: unknown }[] };
  const probs = body.data?.[0]?.probs;
  if (!Array.isArray(probs) || probs.length !== CRITIC_LABELS.length || probs.some((p) => typeof p !== 'number')) {
    throw new Error(`the critic service answered ${Array.isArray(probs) ? probs.length : 'no'} probabilities for ${CRITIC_LABELS.length} labels`);
  }
  const map = Object.fromEntries(CRITIC_LABELS.map((l, i) => [l, probs[i] as number]));
  const score = map['success']!;
  const sorted = Object.entries(map).sort((a, b) => b[1] - a[1]);
  return {
    score,
    message: `Success: ${score.toFixed(2)}; {${sorted.map(([k, v]) => `${JSON.stringify(k)}: ${pyFloat(v)}`).join(', ')}}`,
    metadata: { event_ids: [...eventIds], categorized_features: categorize(map) },
  };
}

/** Whether a finish scored so should be refined: below the threshold, or an agent issue likely enough. */
export function shouldRefine(cfg: CriticConfig, result: CriticResult): boolean {
  if (!cfg.refinement) return false;
  if (result.score < cfg.refinement.threshold) return true;
  const issues = ((result.metadata?.['categorized_features'] as { agent_behavioral_issues?: Feature[] } | undefined)?.agent_behavioral_issues ?? []);
  return issues.some((i) => i.probability >= cfg.issueThreshold);
}

const FOLLOWUP_START = 'The task appears incomplete (iteration ';

/** The follow-up user message of refinement `iteration` (1-based), naming what the critic saw. */
export function followupPrompt(result: CriticResult, iteration: number): string {
  const lines = [`${FOLLOWUP_START}${iteration}, predicted success likelihood: ${(result.score * 100).toFixed(1)}%).`, ''];
  const c = result.metadata?.['categorized_features'] as Record<string, Feature[]> | undefined;
  const list = (fs: Feature[]) => fs.map((f) => `${f.display_name} (${Math.round(f.probability * 100)}%)`).join(', ');
  const parts: [string, string][] = [['agent_behavioral_issues', 'Potential agent issues'], ['user_followup_patterns', 'Predicted user follow-up needs'], ['infrastructure_issues', 'Infrastructure issues'], ['other', 'Other observations']];
  let any = false;
  for (const [key, label] of parts) {
    const fs = c?.[key];
    if (fs?.length) {
      lines.push(`${label}: ${list(fs)}`);
      any = true;
    }
  }
  if (any) lines.push('');
  lines.push("Please review what you've done and verify each requirement is met.", "List what's working and what needs fixing, then complete the task.");
  return lines.join('\n');
}

/** How many refinement follow-ups the conversation has had (counted from its messages, so a restart keeps the count). */
export function refinementsSoFar(userTexts: readonly string[]): number {
  return userTexts.filter((t) => t.startsWith(FOLLOWUP_START)).length;
}
