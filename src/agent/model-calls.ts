// The agent's model calls: the client for the conversation's current LLM (made again once
// switch_llm replaced it), each call with its usage recorded under the usage id of the LLM that made
// it, as OpenHands keys ConversationStats: the agent LLM's `usage_id` (`default` unless named; a
// `profile:<name>` once switch_profile or the routing tool gave it that LLM profile), the condenser
// LLM's, `ask-agent-llm`, `classifier:<profile>` for the routing tool's classifier. Also what the
// run has spent, and the side questions of ask_agent.
import { BadGateway, Conflict } from '../api/errors.ts';
import { CONVERSATION_HEADER } from '../api/model-gateway.ts';
import type { ErrorClassification, Event } from '../api/events/index.ts';
import { ASK_USAGE_ID } from './ask.ts';
import { completionLog, stateUpdate, tokenEvent } from './events.ts';
import { ModelClient, type ChatMessage, type ChatTool, type Completion, type ModelClientOptions } from './llm/client.ts';
import { toModelCallError } from './llm/errors.ts';
import { isUserAbort } from './llm/sdk.ts';
import { maskDeep } from './mask.ts';
import type { AgentHost, LlmConfig } from './types.ts';
import { condenserConfig } from './condenser/summarizing.ts';
import { addUsage, DEFAULT_USAGE_ID, isEmpty, priced, statsValue, usageFromStats, ZERO_USAGE, type Usage, type BucketMetrics, type NamedBucket, type UsageBucket } from './usage.ts';

/** The usage id of the routing tool's classifier calls, before the LLM profile's name (OpenHands'). */
export const CLASSIFIER_USAGE_PREFIX = 'classifier:';
/** The usage id switch_profile (and the routing tool's switch) gives an LLM profile's LLM, before its name. */
export const PROFILE_USAGE_PREFIX = 'profile:';

export const LLM_NOT_CONFIGURED =
  'No model is configured for this conversation. Set LLM_MODEL (and LLM_BASE_URL, LLM_API_KEY for an OpenAI-compatible endpoint) for agentyard, or send agent.llm in the start request.';

export interface ModelCallsDeps {
  host: AgentHost;
  options: ModelClientOptions | undefined;
  /** The agent's one way out (masks every event). */
  emit(event: Event): void;
  /** The agent's current masker (it changes with the secrets and the model key). */
  mask(text: string): string;
  /** Records a ConversationErrorEvent and ends the run as error. */
  fail(code: string, detail: string, classification?: ErrorClassification): void;
}

export interface CallOptions {
  stream: boolean;
  condensable: boolean;
  bucket: UsageBucket;
}

/** Before usage was keyed by usage id, this server counted the agent LLM's calls under `agent`. */
const LEGACY_AGENT_BUCKET = 'agent';
/** The usage id of a condenser without an LLM of its own (OpenHands' condenser settings name its copy of the agent's LLM so). */
const CONDENSER_USAGE_ID = 'condenser';

/** The usage id of the agent LLM's calls: its `usage_id`, OpenHands' default when it names none. */
export function agentUsageId(host: AgentHost): string {
  return host.request.agent?.llm?.usage_id ?? DEFAULT_USAGE_ID;
}

/**
 * The usage id of the configured summarizing condenser's LLM (undefined without one): the usage_id
 * of its `llm` (`default` when that names none), else `condenser`.
 */
export function condenserUsageId(host: AgentHost): string | undefined {
  const raw = host.request.agent?.condenser;
  try {
    if (!condenserConfig(raw)) return undefined;
  } catch {
    return undefined;
  }
  const llm = raw?.['llm'];
  if (llm === null || typeof llm !== 'object') return CONDENSER_USAGE_ID;
  const id = (llm as Record<string, unknown>)['usage_id'];
  return typeof id === 'string' ? id : DEFAULT_USAGE_ID;
}

export class ModelCalls {
  readonly #d: ModelCallsDeps;
  /** The model client and the `host.llm` it was made for. */
  #client: { config: LlmConfig; client: ModelClient } | undefined;
  /**
   * Usage per usage id, each with the model its calls went to, continued from the recorded stats:
   * the agent LLM's (and, after a switch, the LLMs it had before), the condenser's, ask_agent's, the
   * routing tool's classifier and LLM profiles.
   */
  readonly #buckets: Record<string, NamedBucket>;
  /** Prompt tokens of the last agent call since the last condensation: the view's size in tokens, one step behind. */
  viewTokens: number | undefined;
  /** What each task tool's sub-agent used, under `task:<id>` (kept from the recorded stats). */
  readonly #tasks: Record<string, BucketMetrics>;

  constructor(d: ModelCallsDeps) {
    this.#d = d;
    const recorded = d.host.stats();
    const entries = Object.entries(recorded?.usage_to_metrics ?? {});
    this.#tasks = Object.fromEntries(entries.filter(([k]) => k.startsWith('task:'))) as Record<string, BucketMetrics>;
    this.#buckets = {};
    const agentId = agentUsageId(d.host);
    const legacy = agentId !== LEGACY_AGENT_BUCKET && entries.some(([k]) => k === LEGACY_AGENT_BUCKET) && !entries.some(([k]) => k === agentId);
    for (const [k, m] of entries) {
      if (k.startsWith('task:')) continue;
      // A conversation recorded before usage ids: its `agent` bucket is the agent LLM's, so it continues under that LLM's usage id.
      const key = legacy && k === LEGACY_AGENT_BUCKET ? agentId : k;
      this.#buckets[key] = { model: m?.model_name ?? '', state: { total: usageFromStats(recorded, k) } };
    }
  }

  /** The usage id a call of `role` counts under. */
  #usageId(role: UsageBucket): string {
    if (role === 'agent') return agentUsageId(this.#d.host);
    if (role === 'condenser') return condenserUsageId(this.#d.host) ?? CONDENSER_USAGE_ID;
    return ASK_USAGE_ID;
  }

  /** A task tool's sub-agent ended: its usage joins the conversation's stats as `task:<id>` (OpenHands), in a stats update. */
  recordTask(taskId: string, metrics: BucketMetrics | undefined): void {
    if (!metrics) return;
    this.#tasks[`task:${taskId}`] = metrics;
    this.#d.emit(stateUpdate('stats', this.#stats()));
  }

  /**
   * The `stats` value: the agent's and the condenser's LLMs listed from the start (OpenHands registers
   * them, at zero, when the agent starts), every other bucket once it counted something, then the sub-agents'.
   */
  #stats(): { usage_to_metrics: Record<string, BucketMetrics> } {
    const host = this.#d.host;
    const model = host.llm?.model ?? '';
    const listed: Record<string, NamedBucket> = {};
    for (const id of [agentUsageId(host), condenserUsageId(host)]) {
      if (id !== undefined) listed[id] = this.#buckets[id] ?? { model, state: { total: ZERO_USAGE } };
    }
    for (const [k, b] of Object.entries(this.#buckets)) if (!(k in listed) && !isEmpty(b.state)) listed[k] = b;
    return { usage_to_metrics: { ...statsValue(listed, host.request.max_budget_per_run ?? null).usage_to_metrics, ...this.#tasks } };
  }

  /** The model client for `host.llm` (made again once switch_llm replaced it), or undefined after recording why there is none. */
  current(): ModelClient | undefined {
    const llm = this.#d.host.llm;
    if (!llm) {
      this.#d.fail('LLMNotConfigured', LLM_NOT_CONFIGURED, { kind: 'config', retryable: false, user_action: 'settings' });
      return undefined;
    }
    try {
      return this.#clientFor(llm);
    } catch (err) {
      const e = toModelCallError(err);
      this.#d.fail(e.code, e.message, e.classification);
      return undefined;
    }
  }

  /** Throws ModelCallError('LLMConfigError') for a configuration that cannot work. */
  #clientFor(llm: LlmConfig): ModelClient {
    if (this.#client?.config !== llm) {
      // The model gateway counts usage per conversation by this header; other endpoints ignore it.
      const headers = { ...this.#d.options?.headers, [CONVERSATION_HEADER]: this.#d.host.conversationId };
      this.#client = { config: llm, client: new ModelClient(llm, { ...this.#d.options, headers }) };
    }
    return this.#client.client;
  }

  /**
   * One model call with its usage recorded. Undefined when the run must end (aborted, or failed with
   * a ConversationErrorEvent); 'condense' for a context-window error that a condensation may cure.
   */
  async call(model: ModelClient, messages: ChatMessage[], tools: ChatTool[], signal: AbortSignal, o: CallOptions): Promise<Completion | 'condense' | undefined> {
    let completion: Completion;
    const host = this.#d.host;
    const onDelta = o.stream ? host.streamDelta?.bind(host) : undefined;
    const onRateLimit = host.rateLimited?.bind(host);
    const started = Date.now();
    try {
      completion = await model.complete(messages, tools, signal, { stream: o.stream, ...(onDelta ? { onDelta: (d) => onDelta(maskDeep(d, this.#d.mask)) } : {}), ...(onRateLimit ? { onRateLimit } : {}) });
    } catch (err) {
      if (signal.aborted || isUserAbort(err)) return undefined;
      const e = toModelCallError(err);
      this.#logCompletion(model.model, o, { messages, tools, kwargs: { stream: o.stream }, error: { type: e.code, message: e.message }, cost: 0, latency_sec: (Date.now() - started) / 1000 }, true);
      if (e.code === 'LLMContextWindowExceedError' && o.condensable) return 'condense';
      this.#d.fail(e.code, e.message, e.classification);
      return undefined;
    }
    const usage = completion.usage;
    this.#logCompletion(model.model, o, {
      messages,
      tools,
      kwargs: { stream: o.stream },
      response: { id: completion.responseId, content: completion.content, reasoning_content: completion.reasoning, tool_calls: completion.toolCalls },
      cost: priced(usage, host.request.agent?.llm).cost,
      latency_sec: (Date.now() - started) / 1000,
      usage_summary: { prompt_tokens: usage.promptTokens, completion_tokens: usage.completionTokens, reasoning_tokens: usage.reasoningTokens, cache_read_tokens: usage.cacheReadTokens },
    }, false);
    this.#record(model.model, completion, o.bucket);
    return completion;
  }

  /** With `agent.llm.log_completions` on, every agent and condenser call (and failure) becomes an LLMCompletionLogEvent; masked like every event. */
  #logCompletion(model: string, o: CallOptions, data: Record<string, unknown>, failed: boolean): void {
    const llm = this.#d.host.request.agent?.llm;
    if (llm?.log_completions !== true) return;
    // OpenHands logs the context window its model info gives (0 when unknown); the request's max_input_tokens is ours.
    data = { ...data, context_window: llm.max_input_tokens ?? 0 };
    this.#d.emit(completionLog(model, this.#usageId(o.bucket), data, failed));
  }

  /**
   * A side question (ask_agent): `messages` are the model's view plus the question, `tools` the
   * agent's (so it reads the tool calls of the history). Nothing is emitted; the usage is counted
   * (ask-agent-llm) without a stats event. The answer comes back masked.
   */
  async ask(messages: () => ChatMessage[], tools: ChatTool[], signal: AbortSignal): Promise<string> {
    const completion = await this.#callOnce(() => messages(), tools, signal, ASK_USAGE_ID, { configErrorIsConflict: true });
    if (!completion.content?.trim()) throw new BadGateway('The model answered the question with tool calls instead of text');
    return this.#d.mask(completion.content);
  }

  /**
   * A call of the conversation's model on `messages` alone, without tools (the /goal judge, which
   * OpenHands runs on the agent's LLM): nothing is emitted, the usage counts as the agent's. The
   * answer comes back masked; a model that cannot answer throws BadGateway.
   */
  async plain(messages: ChatMessage[], signal: AbortSignal): Promise<string> {
    const completion = await this.#callOnce(() => messages, [], signal, 'agent', { configErrorIsConflict: false });
    return this.#d.mask(completion.content ?? '');
  }

  /** One call of the conversation's model outside the agent loop, its usage recorded under `usageId`; a failure is a BadGateway with the masked reason. */
  async #callOnce(messages: () => ChatMessage[], tools: ChatTool[], signal: AbortSignal, usageId: UsageBucket, o: { configErrorIsConflict: boolean }): Promise<Completion> {
    const llm = this.#d.host.llm;
    if (!llm) throw new Conflict(LLM_NOT_CONFIGURED);
    let model: ModelClient;
    let completion: Completion;
    try {
      model = this.#clientFor(llm);
      completion = await model.complete(messages(), tools, signal);
    } catch (err) {
      const e = toModelCallError(err);
      if (o.configErrorIsConflict && e.code === 'LLMConfigError') throw new Conflict(this.#d.mask(e.message));
      throw new BadGateway(`The model could not answer (${e.code}): ${this.#d.mask(e.message)}`);
    }
    this.#record(model.model, completion, usageId);
    return completion;
  }

  /**
   * One call of another model than the conversation's (the routing tool's classifier), without
   * tools, outside the agent loop: its usage goes to the bucket `usageId` under that model's name
   * (kept as the conversation's stats, in the next stats update), and counts against the run's budget (as OpenHands registers the
   * classifier LLM). Returns the answer's text, masked; throws ModelCallError when the call fails.
   */
  async classify(llm: LlmConfig, usageId: string, messages: ChatMessage[], signal: AbortSignal): Promise<string> {
    const headers = { ...this.#d.options?.headers, [CONVERSATION_HEADER]: this.#d.host.conversationId };
    const model = new ModelClient(llm, { ...this.#d.options, headers });
    let completion: Completion;
    try {
      completion = await model.complete(messages, [], signal);
    } catch (err) {
      throw toModelCallError(err);
    }
    this.#add(usageId, model.model, completion.usage, completion.responseId);
    // No event of its own (as OpenHands, whose classifier call leaves none): the next stats update carries it.
    this.#d.host.recordStats?.(this.#stats());
    return this.#d.mask(completion.content ?? '');
  }

  /**
   * The TokenEvent of an agent call's answer: only when token ids were asked for
   * (litellm_extra_body.return_token_ids) and came back. The agent emits it where OpenHands does:
   * after the answer's message, or after its actions ran (none while they wait for confirmation).
   */
  tokens(completion: Completion): Event | undefined {
    if (!this.#d.host.request.agent?.llm?.litellm_extra_body?.['return_token_ids'] || !completion.tokenIds) return undefined;
    return tokenEvent(completion.tokenIds.prompt, completion.tokenIds.response);
  }

  /** What the model calls of runs cost so far, summaries and classifier calls included (the budget counts them all, not side questions). */
  spent(): number {
    return Object.entries(this.#buckets).reduce((n, [k, b]) => (k === ASK_USAGE_ID ? n : n + b.state.total.cost), 0);
  }

  #add(usageId: string, model: string, usage: Usage, responseId: string): void {
    const prev = this.#buckets[usageId]?.state.total ?? ZERO_USAGE;
    this.#buckets[usageId] = { model, state: { total: addUsage(prev, usage), last: { usage, responseId } } };
  }

  #record(model: string, completion: Completion, bucket: UsageBucket): void {
    const host = this.#d.host;
    const usage = priced(completion.usage, host.request.agent?.llm);
    // Under the usage id of the LLM that made the call (OpenHands keys its metrics so); a condenser
    // whose LLM has the agent's usage id counts in the agent's bucket.
    this.#add(this.#usageId(bucket), model, usage, completion.responseId);
    if (bucket === 'agent' && usage.promptTokens > 0) this.viewTokens = usage.promptTokens;
    const stats = this.#stats();
    // A side question leaves no event (OpenHands); its usage is kept, and in the next stats event.
    if (bucket === ASK_USAGE_ID) host.recordStats?.(stats);
    else this.#d.emit(stateUpdate('stats', stats));
  }
}
