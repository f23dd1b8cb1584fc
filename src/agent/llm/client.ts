// The model client: OpenAI-compatible chat completions through the official SDK. Timeouts and
// retries follow the conversation's llm settings (retry.ts: timeout, num_retries, retry_*_wait,
// retry_multiplier), not the SDK's own. Failures leave as ModelCallError with an OpenHands-style code.
import type OpenAI from 'openai';
import type { LlmConfig } from '../types.ts';
import { codexHeaders, codexRequest, collectCodexStream, type SubscriptionAccess } from './codex.ts';
import type { KeyRefresh } from './key-refresh.ts';
import { ModelCallError, toModelCallError } from './errors.ts';
import { resolveEndpoint } from './model-name.ts';
import { DEFAULT_RETRY, isRateLimit, retrySettings, withRetries, type RetrySettings } from './retry.ts';
import { isUserAbort, loadSdk, sdkInCall } from './sdk.ts';

export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ChatTool = OpenAI.Chat.Completions.ChatCompletionTool;

export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface CallUsage {
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  /** What the endpoint reported in `usage.cost` (LiteLLM proxy, OpenRouter), else 0. */
  cost: number;
}

export interface Completion {
  responseId: string;
  /** Token ids of the prompt and the answer, when the endpoint returns them (vLLM with return_token_ids). */
  tokenIds?: { prompt: number[]; response: number[] };
  content: string | null;
  /** `reasoning_content` of reasoning models (LiteLLM, DeepSeek), when the endpoint returns it. */
  reasoning: string | null;
  toolCalls: ToolCall[];
  usage: CallUsage;
}

/** Server-wide defaults under the conversation's own llm settings (tests use them to fail fast). */
export interface ModelClientOptions {
  /** Retries after the first attempt (default: DEFAULT_RETRY.attempts - 1). */
  maxRetries?: number;
  /** Per attempt (default: DEFAULT_RETRY.timeoutSeconds). */
  timeoutMs?: number;
  /** Sent with every call (the conversation's id, which the model gateway records usage under). */
  headers?: Record<string, string>;
  /** Managed key refresh (key-refresh.ts): used when it applies to this LLM. */
  keyRefresh?: KeyRefresh;
}

export class ModelClient {
  /** The SDK's client, made with the first call (the SDK is loaded then: sdk.ts). */
  #client: OpenAI | undefined;
  /** Replaced (with the client) when a refreshed key comes. */
  #clientOptions: ConstructorParameters<typeof OpenAI>[0];
  readonly #keyRefresh: KeyRefresh | undefined;
  /** The configured (litellm-style) name, as it appears in stats. */
  readonly model: string;
  /** The name sent to the endpoint. */
  readonly endpointModel: string;
  /** Timeout and retries in force: the conversation's llm settings over the options over DEFAULT_RETRY. */
  readonly retry: RetrySettings;
  /** `litellm_extra_body`: merged under every request body (the body's own fields win). */
  readonly #extraBody: Record<string, unknown>;
  /** Set for a ChatGPT subscription: every call goes to its Codex Responses endpoint (codex.ts). */
  readonly #subscription: SubscriptionAccess | undefined;

  /** Throws ModelCallError('LLMConfigError') when the configuration cannot work. */
  constructor(config: LlmConfig, opts: ModelClientOptions = {}) {
    this.#subscription = config.subscription;
    // A subscription's calls go to its Codex endpoint whatever base URL the settings name.
    const { model, baseURL } = resolveEndpoint(config.subscription ? { model: config.model } : config);
    this.model = config.model;
    this.endpointModel = model;
    this.#extraBody = config.extraBody ?? {};
    this.retry = retrySettings(config.retry, {
      ...DEFAULT_RETRY,
      ...(opts.maxRetries !== undefined ? { attempts: opts.maxRetries + 1 } : {}),
      ...(opts.timeoutMs !== undefined ? { timeoutSeconds: opts.timeoutMs / 1000 } : {}),
    });
    this.#clientOptions = {
      // Local OpenAI-compatible servers often need no key; the SDK insists on one.
      apiKey: config.apiKey || 'not-needed',
      ...(baseURL ? { baseURL } : {}),
      maxRetries: 0, // retries are ours (withRetries), with the conversation's backoff
      timeout: this.retry.timeoutSeconds * 1000,
      ...(opts.headers ? { defaultHeaders: opts.headers } : {}),
    };
    this.#keyRefresh = opts.keyRefresh?.appliesTo(config) ? opts.keyRefresh : undefined;
  }

  async #sdkClient(): Promise<OpenAI> {
    const OpenAI = await loadSdk();
    return (this.#client ??= new OpenAI(this.#clientOptions));
  }

  /**
   * One completion. Rejects with ModelCallError after the retries, or with the SDK's
   * APIUserAbortError when `signal` aborts (the caller knows it aborted). With `stream`, the answer
   * is read as server-sent chunks (usage requested with include_usage) and `onDelta` sees each
   * piece of text or reasoning as it arrives; the result is the same Completion either way.
   */
  async complete(messages: ChatMessage[], tools: ChatTool[], signal?: AbortSignal, opts: CompleteOptions = {}): Promise<Completion> {
    const body = { model: this.endpointModel, messages, ...(tools.length ? { tools } : {}), ...(opts.maxTokens !== undefined ? { max_tokens: opts.maxTokens } : {}) };
    const reqOpts = signal ? { signal } : {};
    let raw: RawAnswer;
    // A streamed answer already shown in part is not asked for again (its pieces would repeat).
    let shown = false;
    const onDelta = opts.onDelta && ((d: { content: string | null; reasoning: string | null }) => ((shown = true), opts.onDelta!(d)));
    // A wait for the provider's rate limit is told when it starts and when it ends (also when aborted).
    let limited = false;
    const endLimit = () => {
      if (limited) opts.onRateLimit?.(null);
      limited = false;
    };
    const call = () =>
      withRetries(this.retry, signal, () => this.#attempt(body, reqOpts, opts.stream === true, onDelta, signal), {
        canRetry: () => !shown,
        waiting: (w) => {
          if (!isRateLimit(w.error) || !opts.onRateLimit) return;
          limited = true;
          opts.onRateLimit({ until: new Date(Date.now() + w.ms), attempt: w.next, attempts: w.attempts });
        },
        resumed: () => endLimit(),
      });
    try {
      try {
        raw = await call();
      } catch (err) {
        // A managed key rotated since these settings were taken: fetch the current one and call once more.
        if (shown || !(await this.#refreshedKey(err, signal))) throw err;
        raw = await call();
      }
    } catch (err) {
      if (isUserAbort(err)) throw err;
      throw toModelCallError(err);
    } finally {
      endLimit();
    }
    return completionOf(raw);
  }

  /**
   * On the endpoint's refusal of the key (401/403) and a managed key refresh that applies: fetches the
   * key, and when it differs from the one refused, uses it for this call's retry and every later call
   * (OpenHands 1.58 retries with a copy and keeps the stale key, so each later call is refused first).
   */
  async #refreshedKey(err: unknown, signal: AbortSignal | undefined): Promise<boolean> {
    if (!this.#keyRefresh || this.#subscription) return false;
    // withRetries gives up with a ModelCallError; LLMAuthenticationError is a 401 or 403, OpenHands' trigger too.
    if (!(err instanceof ModelCallError && err.code === 'LLMAuthenticationError')) return false;
    const key = await this.#keyRefresh.fetchKey(signal);
    if (!key || key === this.#clientOptions?.apiKey) return false;
    this.#clientOptions = { ...this.#clientOptions, apiKey: key };
    this.#client = undefined;
    return true;
  }

  async #attempt(body: { model: string; messages: ChatMessage[]; tools?: ChatTool[]; max_tokens?: number }, reqOpts: { signal?: AbortSignal }, stream: boolean, onDelta: CompleteOptions['onDelta'], signal: AbortSignal | undefined): Promise<RawAnswer> {
    let raw: RawAnswer;
    if (this.#subscription) {
      // The Codex endpoint only streams; a caller that wanted no deltas just does not see them.
      raw = await this.#codex(this.#subscription, body, stream ? onDelta : undefined, signal);
    } else if (stream) {
      raw = await this.#streamed(body, onDelta, signal);
    } else {
      const response = await (await this.#sdkClient()).chat.completions.create({ ...this.#extraBody, ...body } as typeof body, reqOpts);
      const message = response.choices?.[0]?.message;
      if (!message) throw new ModelCallError('LLMNoResponseError', 'The model endpoint answered without a choice');
      raw = {
        id: response.id,
        content: message.content ?? null,
        reasoning: (message as { reasoning_content?: string | null }).reasoning_content ?? null,
        toolCalls: (message.tool_calls ?? [])
          .filter((c): c is OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall => c.type === 'function')
          .map((c) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })),
        usage: response.usage as RawUsage | undefined,
        ...tokenIdsOf(response),
      };
    }
    if (!raw.content && raw.toolCalls.length === 0) throw new ModelCallError('LLMNoResponseError', 'The model answered with neither text nor tool calls');
    return raw;
  }

  /**
   * A streamed attempt. The SDK's timeout ends at the response headers, so a stream that stalls
   * after them would hang the run for good: silence for the attempt's timeout is a timeout too.
   */
  async #streamed(body: { model: string; messages: ChatMessage[]; tools?: ChatTool[] }, onDelta: CompleteOptions['onDelta'], signal: AbortSignal | undefined): Promise<RawAnswer> {
    const client = await this.#sdkClient();
    return this.#guarded(signal, async (s, heard) => {
      const chunks = await client.chat.completions.create({ ...this.#extraBody, ...body, stream: true, stream_options: { include_usage: true } }, { signal: s });
      return collectStream(chunks, onDelta, signal, heard);
    });
  }

  /**
   * A call through a ChatGPT subscription: the token is asked for at each attempt (so a refreshed one
   * is used), and the client is made for it; the answer is always streamed.
   */
  async #codex(access: SubscriptionAccess, body: { model: string; messages: ChatMessage[]; tools?: ChatTool[] }, onDelta: CompleteOptions['onDelta'], signal: AbortSignal | undefined): Promise<RawAnswer> {
    const { accessToken, accountId } = await access.credentials();
    const OpenAI = await loadSdk();
    const client = new OpenAI({
      ...this.#clientOptions,
      apiKey: accessToken,
      baseURL: access.baseUrl,
      defaultHeaders: { ...this.#clientOptions?.defaultHeaders, ...codexHeaders(accountId) },
    });
    return this.#guarded(signal, async (s, heard) => {
      const request = codexRequest(body.model, body.messages, body.tools ?? [], this.#extraBody);
      const events = (await client.responses.create(request as unknown as OpenAI.Responses.ResponseCreateParamsStreaming, { signal: s })) as unknown as AsyncIterable<{ type: string } & Record<string, unknown>>;
      return collectCodexStream(events, onDelta, signal, heard);
    });
  }

  /** Runs a streamed attempt that fails as a timeout once the stream is silent for the attempt's timeout. */
  async #guarded(signal: AbortSignal | undefined, run: (signal: AbortSignal, heard: () => void) => Promise<RawAnswer>): Promise<RawAnswer> {
    const stalled = new AbortController();
    const silenceMs = this.retry.timeoutSeconds * 1000;
    let timer = setTimeout(() => stalled.abort(), silenceMs);
    const heard = () => {
      clearTimeout(timer);
      timer = setTimeout(() => stalled.abort(), silenceMs);
    };
    await loadSdk();
    const OpenAI = sdkInCall();
    const silent = () => new OpenAI.APIConnectionTimeoutError({ message: `The model's stream was silent for ${this.retry.timeoutSeconds} s` });
    try {
      const raw = await run(signal ? AbortSignal.any([signal, stalled.signal]) : stalled.signal, heard);
      // The SDK ends an aborted stream quietly with what it had: that answer was cut short.
      if (signal?.aborted) throw new OpenAI.APIUserAbortError();
      if (stalled.signal.aborted) throw silent();
      return raw;
    } catch (err) {
      throw stalled.signal.aborted && !signal?.aborted ? silent() : err;
    } finally {
      clearTimeout(timer);
    }
  }
}

function completionOf(raw: RawAnswer): Completion {
  const { usage, content, toolCalls } = raw;
  return {
    responseId: raw.id,
    content,
    reasoning: raw.reasoning,
    toolCalls,
    ...(raw.tokenIds ? { tokenIds: raw.tokenIds } : {}),
    usage: {
      promptTokens: usage?.prompt_tokens ?? 0,
      completionTokens: usage?.completion_tokens ?? 0,
      cacheReadTokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
      reasoningTokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
      cost: typeof usage?.cost === 'number' && Number.isFinite(usage.cost) ? usage.cost : 0,
    },
  };
}

export interface CompleteOptions {
  stream?: boolean;
  /** Caps the answer (a pre-flight asks for one token). */
  maxTokens?: number;
  /** Streaming only: each piece of answer text or reasoning, in order. */
  onDelta?: (delta: { content: string | null; reasoning: string | null }) => void;
  /**
   * The provider answered 429 and the call waits before its next attempt: when the wait ends and
   * which attempt follows; then null once the call goes on (or ends: aborted, failed for good).
   */
  onRateLimit?: (wait: RateLimitWait | null) => void;
}

export interface RateLimitWait {
  until: Date;
  /** The attempt after the wait, of `attempts` in all. */
  attempt: number;
  attempts: number;
}

type RawUsage = OpenAI.CompletionUsage & { cost?: number };

interface RawAnswer {
  id: string;
  content: string | null;
  reasoning: string | null;
  toolCalls: ToolCall[];
  usage: RawUsage | undefined;
  tokenIds?: { prompt: number[]; response: number[] };
}

const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every((n) => Number.isInteger(n));

/** vLLM's `prompt_token_ids` and the choice's `token_ids` (LiteLLM moves the latter into provider_specific_fields). */
function tokenIdsOf(response: unknown): { tokenIds?: { prompt: number[]; response: number[] } } {
  const r = response as { prompt_token_ids?: unknown; choices?: { token_ids?: unknown; provider_specific_fields?: { token_ids?: unknown } }[] };
  const choice = r.choices?.[0];
  const answer = choice?.token_ids ?? choice?.provider_specific_fields?.token_ids;
  return isIds(r.prompt_token_ids) && isIds(answer) ? { tokenIds: { prompt: r.prompt_token_ids, response: answer } } : {};
}

/** Assembles a streamed answer: text and reasoning concatenated, tool calls by index, usage from the last chunk. */
async function collectStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>, onDelta: CompleteOptions['onDelta'], signal: AbortSignal | undefined, heard: () => void): Promise<RawAnswer> {
  let id = '';
  let content: string | null = null;
  let reasoning: string | null = null;
  let usage: RawUsage | undefined;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    // Chunks already buffered would still be read after an abort: stop as a non-streamed call does.
    if (signal?.aborted) throw new (sdkInCall().APIUserAbortError)();
    heard();
    id ||= chunk.id;
    if (chunk.usage) usage = chunk.usage as RawUsage;
    const delta = chunk.choices?.[0]?.delta as (OpenAI.Chat.Completions.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null }) | undefined;
    if (!delta) continue;
    const text = delta.content || null;
    const thought = delta.reasoning_content || null;
    if (text) content = (content ?? '') + text;
    if (thought) reasoning = (reasoning ?? '') + thought;
    // Every string piece is handed out, an empty one too (a provider's opening `content: ""`, a
    // boundary after a tool call), as OpenHands' agent server forwards them: a client sees the model
    // has begun answering before any token or tool call arrives.
    const shownText = typeof delta.content === 'string' ? delta.content : null;
    const shownThought = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : null;
    if ((shownText !== null || shownThought !== null) && onDelta) onDelta({ content: shownText, reasoning: shownThought });
    for (const tc of delta.tool_calls ?? []) {
      const call = (calls[tc.index] ??= { id: '', name: '', arguments: '' });
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.name += tc.function.name;
      if (tc.function?.arguments) call.arguments += tc.function.arguments;
    }
  }
  if (!id) throw new ModelCallError('LLMNoResponseError', 'The model endpoint ended the stream without a chunk');
  return { id, content, reasoning, toolCalls: calls.filter(Boolean), usage };
}
