// The agent's model calls: the client for the conversation's current LLM (made again once
// switch_llm replaced it), each call with its usage recorded per usage id (`agent`, `condenser`,
// `ask-agent-llm`, `classifier:<profile>` for the routing tool's classifier, `profile:<name>` for the
// agent's calls once switch_profile or the routing tool gave it that LLM profile), what the run has
// spent, and the side questions of ask_agent.
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
import { addUsage, priced, statsValue, usageFromStats, ZERO_USAGE, type Usage, type BucketMetrics, type BucketState, type UsageBucket } from './usage.ts';

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

export class ModelCalls {
  readonly #d: ModelCallsDeps;
  /** The model client and the `host.llm` it was made for. */
  #client: { config: LlmConfig; client: ModelClient } | undefined;
  /** Usage per bucket (agent calls, condenser summaries, side questions), continued from the recorded stats. */
  readonly #usage: Record<UsageBucket, BucketState>;
  /** Prompt tokens of the last agent call since the last condensation: the view's size in tokens, one step behind. */
  viewTokens: number | undefined;
  /** What each task tool's sub-agent used, under `task:<id>` (kept from the recorded stats). */
  readonly #tasks: Record<string, BucketMetrics>;
  /**
   * Buckets of LLM profiles, each with its own model: the routing tool's classifier calls
   * (`classifier:<profile>`), and the agent's calls on an LLM profile it was switched to
   * (`profile:<name>`, the usage id switch_profile gives the LLM). OpenHands keys an LLM's metrics
   * by its usage id; the conversation's first LLM stays under `agent`, as this server always counted it.
   */
  readonly #named: Record<string, { model: string; state: BucketState }>;
  /** The model of the last call counted in `#usage` (its buckets' model_name); undefined until one is. */
  #usageModel: string | undefined;

  constructor(d: ModelCallsDeps) {
    this.#d = d;
    const recorded = d.host.stats();
    this.#usage = { agent: { total: usageFromStats(recorded, 'agent') }, condenser: { total: usageFromStats(recorded, 'condenser') }, [ASK_USAGE_ID]: { total: usageFromStats(recorded, ASK_USAGE_ID) } };
    this.#tasks = Object.fromEntries(Object.entries(recorded?.usage_to_metrics ?? {}).filter(([k]) => k.startsWith('task:'))) as Record<string, BucketMetrics>;
    this.#named = Object.fromEntries(Object.entries(recorded?.usage_to_metrics ?? {}).filter(([k]) => k.startsWith(CLASSIFIER_USAGE_PREFIX) || k.startsWith(PROFILE_USAGE_PREFIX))
      .map(([k, m]) => [k, { model: m?.model_name ?? '', state: { total: usageFromStats(recorded, k as UsageBucket) } }]));
  }

  /** Usage entries beside the agent's own buckets: the sub-agents' and the LLM profiles'. */
  #others(): Record<string, BucketMetrics> {
    const budget = this.#d.host.request.max_budget_per_run ?? null;
    const named = Object.entries(this.#named).map(([k, c]) => statsValue(c.model, { [k]: c.state } as Record<UsageBucket, BucketState>, budget).usage_to_metrics);
    return Object.assign({}, this.#tasks, ...named) as Record<string, BucketMetrics>;
  }

  /** A task tool's sub-agent ended: its usage joins the conversation's stats as `task:<id>` (OpenHands), in a stats update. */
  recordTask(taskId: string, metrics: BucketMetrics | undefined): void {
    if (!metrics) return;
    this.#tasks[`task:${taskId}`] = metrics;
    this.#d.emit(stateUpdate('stats', this.#stats()));
  }

  #stats() {
    const host = this.#d.host;
    const v = statsValue(this.#usageModel ?? host.llm?.model ?? '', this.#usage, host.request.max_budget_per_run ?? null);
    return { usage_to_metrics: { ...v.usage_to_metrics, ...this.#others() } };
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
    const usageId = o.bucket === 'agent' ? (this.#d.host.request.agent?.llm?.usage_id ?? 'agent') : o.bucket;
    this.#d.emit(completionLog(model, usageId, data, failed));
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
    this.#addNamed(usageId, model.model, completion.usage, completion.responseId);
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

  /** What the model calls of runs cost so far, summaries and classifier calls included (the budget counts them all). */
  spent(): number {
    return this.#usage.agent.total.cost + this.#usage.condenser.total.cost + Object.values(this.#named).reduce((n, c) => n + c.state.total.cost, 0);
  }

  #addNamed(usageId: string, model: string, usage: Usage, responseId: string): void {
    const prev = this.#named[usageId]?.state.total ?? ZERO_USAGE;
    this.#named[usageId] = { model, state: { total: addUsage(prev, usage), last: { usage, responseId } } };
  }

  #record(model: string, completion: Completion, bucket: UsageBucket): void {
    const host = this.#d.host;
    const usage = priced(completion.usage, host.request.agent?.llm);
    // The agent on an LLM profile it was switched to: that profile's bucket (OpenHands counts by the LLM's usage id).
    const usageId = host.request.agent?.llm?.usage_id;
    if (bucket === 'agent' && usageId?.startsWith(PROFILE_USAGE_PREFIX)) this.#addNamed(usageId, model, usage, completion.responseId);
    else {
      this.#usage[bucket] = { total: addUsage(this.#usage[bucket].total, usage), last: { usage, responseId: completion.responseId } };
      this.#usageModel = model;
    }
    if (bucket === 'agent' && usage.promptTokens > 0) this.viewTokens = usage.promptTokens;
    const stats = { usage_to_metrics: { ...statsValue(this.#usageModel ?? model, this.#usage, host.request.max_budget_per_run ?? null).usage_to_metrics, ...this.#others() } };
    // A side question leaves no event (OpenHands); its usage is kept, and in the next stats event.
    if (bucket === ASK_USAGE_ID) host.recordStats?.(stats);
    else this.#d.emit(stateUpdate('stats', stats));
  }
}
